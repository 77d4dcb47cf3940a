package lab

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Fixed lab layout shared with every helper and test (see notes/common.md).
const (
	NetnsName     = "gpucluster-lab"
	BridgeName    = "gclab0"
	Subnet        = "10.0.0.0/24"
	ClientAddress = "10.0.0.1"
	LoginHost     = "login01"
	MaxGPUServers = 32
	GPUsPerServer = 4
	subnetPrefix  = "10.0.0."
	firstHostByte = 10
)

var gpuHostPattern = regexp.MustCompile(`^gpu([0-9]{2})$`)

// PlannedHost is a host before it runs: name, address and role follow from the name alone.
type PlannedHost struct {
	Name    string
	Address string
	Role    string
}

// Plan returns login01 plus gpu01..gpuNN.
func Plan(gpuServers int) ([]PlannedHost, error) {
	if gpuServers < 1 || gpuServers > MaxGPUServers {
		return nil, fmt.Errorf("number of GPU servers must be between 1 and %d, got %d", MaxGPUServers, gpuServers)
	}
	hosts := []PlannedHost{{Name: LoginHost, Address: subnetPrefix + strconv.Itoa(firstHostByte), Role: RoleLogin}}
	for n := 1; n <= gpuServers; n++ {
		h, err := PlanHost(fmt.Sprintf("gpu%02d", n))
		if err != nil {
			return nil, err
		}
		hosts = append(hosts, h)
	}
	return hosts, nil
}

// PlanHost maps a host name to its address: login01 is .10, gpuNN is .(10+NN).
func PlanHost(name string) (PlannedHost, error) {
	if name == LoginHost {
		return PlannedHost{Name: name, Address: subnetPrefix + strconv.Itoa(firstHostByte), Role: RoleLogin}, nil
	}
	m := gpuHostPattern.FindStringSubmatch(name)
	if m == nil {
		return PlannedHost{}, fmt.Errorf("invalid lab host name %q: want %s or gpuNN", name, LoginHost)
	}
	n, _ := strconv.Atoi(m[1]) // the pattern guarantees two digits
	if n < 1 || n > MaxGPUServers {
		return PlannedHost{}, fmt.Errorf("invalid lab host name %q: GPU server number must be 01..%02d", name, MaxGPUServers)
	}
	return PlannedHost{Name: name, Address: subnetPrefix + strconv.Itoa(firstHostByte+n), Role: RoleGPU}, nil
}

// RenderHostsFile renders /etc/hosts for a lab host: every lab host by name.
func RenderHostsFile(hosts []PlannedHost) string {
	var b strings.Builder
	b.WriteString("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	fmt.Fprintf(&b, "%s\tlab-client\n", ClientAddress)
	for _, h := range hosts {
		fmt.Fprintf(&b, "%s\t%s\n", h.Address, h.Name)
	}
	return b.String()
}

// RenderNetworkFile renders the systemd-networkd config of the container's host0 link.
func RenderNetworkFile(address string) string {
	return fmt.Sprintf(`[Match]
Name=host0

[Network]
Address=%s/24
DHCP=no
LinkLocalAddressing=no
IPv6AcceptRA=no
`, address)
}

// RenderKnownHosts renders known_hosts lines for one host from its public key files' contents.
func RenderKnownHosts(h PlannedHost, publicKeys []string) (string, error) {
	var b strings.Builder
	for _, key := range publicKeys {
		fields := strings.Fields(key)
		if len(fields) < 2 {
			return "", fmt.Errorf("malformed public host key of %s: %q", h.Name, key)
		}
		fmt.Fprintf(&b, "%s,%s %s %s\n", h.Name, h.Address, fields[0], fields[1])
	}
	return b.String(), nil
}
