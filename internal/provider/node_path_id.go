package provider

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
)

// nodePathID is the ID of a resource that is one directory on one node: a BeeGFS target or
// metadata directory.
func nodePathID(node, dir string) string { return node + ":" + dir }

// parseNodePathID splits NODE:PATH at the colon that starts the absolute path, so an IPv6
// node address keeps its own colons.
func parseNodePathID(id string) (node, dir string, err error) {
	node, rest, ok := strings.Cut(id, ":/")
	if !ok {
		return "", "", errors.New("no \":/\" between the node and the path")
	}
	if !nodeRefPattern.MatchString(node) {
		return "", "", fmt.Errorf("%q is not a node name or address", node)
	}
	dir = "/" + rest
	if err := beegfs.ValidatePath(dir); err != nil {
		return "", "", err
	}
	return node, dir, nil
}
