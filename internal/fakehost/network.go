package fakehost

// ipCmd models `ip -o addr show`: the loopback interface, which every fake host listens on,
// and the host's Addresses on eth0.
func ipCmd(c *Call) int {
	if len(c.Args) != 4 || c.Args[1] != "-o" || c.Args[2] != "addr" || c.Args[3] != "show" {
		return c.NotModelled("this form of ip")
	}
	const tail = ` \       valid_lft forever preferred_lft forever`
	c.Println("1: lo    inet 127.0.0.1/8 scope host lo" + tail)
	c.Println("1: lo    inet6 ::1/128 scope host noprefixroute" + tail)
	for _, p := range c.Host.Addresses {
		family := "inet"
		if p.Addr().Is6() {
			family = "inet6"
		}
		c.Printf("2: eth0    %s %s scope global eth0%s\n", family, p, tail)
	}
	return 0
}
