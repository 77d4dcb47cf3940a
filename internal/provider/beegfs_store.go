package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/beegfs"
)

// beegfsStore is where a BeeGFS resource keeps its data, on a filesystem of its own, as its
// diagnostics name it.
type beegfsStore struct {
	attr  string // the attribute that places it
	title string // as in "Metadata Filesystem Missing"
	what  string // as in "The filesystem the metadata directory was set up on"
}

var (
	mgmtdStore   = beegfsStore{attr: "db_file", title: "Management", what: "the management database"}
	metaStore    = beegfsStore{attr: "path", title: "Metadata", what: "the metadata directory"}
	storageStore = beegfsStore{attr: "path", title: "Storage", what: "the target"}
)

// filesystemMissing says that the filesystem holding dir is not the one s was set up on
// (mountpoint and uuid): an error where it stops a change, a warning where it only explains a
// refresh.
func (s beegfsStore) filesystemMissing(warn bool, node, dir, mountpoint, uuid string, now beegfs.Mount) diag.Diagnostic {
	report := nodeAttributeError
	if warn {
		report = nodeAttributeWarning
	}
	return report(path.Root(s.attr), s.title+" Filesystem Missing", node,
		"The filesystem "+s.what+" was set up on is not mounted where it was", "Nothing is changed until it is back.",
		beegfs.FilesystemMissing(dir, mountpoint, uuid, now))
}
