package provider

// planKind is how a resource plans one thing it declares: Terraform plans a replacement twice,
// first with the prior state, then the create half without it, and every other resource once.
type planKind int

const (
	planCreate  planKind = iota // no prior state
	planReplace                 // prior state, and a changed attribute forces a new object
	planUpdate                  // prior state, kept in place
)
