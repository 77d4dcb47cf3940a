package provider

// planKind is how a resource plans one thing it declares: Terraform plans a replacement twice,
// first with the prior state, then the create half without it, and every other resource once.
type planKind int

const (
	planCreate  planKind = iota // no prior state
	planReplace                 // prior state, and a changed attribute forces a new object
	planUpdate                  // prior state, kept in place
)

// planCounts counts the plans of one declared thing in a run, by planKind.
type planCounts [3]int

// resources counts the resources behind the plans: each update or replacement is one, and the
// create half of a replacement is not another.
func (c planCounts) resources() int {
	creates := c[planCreate] - c[planReplace]
	return c[planUpdate] + c[planReplace] + max(creates, 0)
}
