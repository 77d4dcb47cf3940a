// Package beegfs knows the files and commands of a BeeGFS installation as the
// guide sets it up: the management, metadata and storage services on their
// own filesystems, guarded by the safety interlock, and the client mounted
// over /home. It holds no Terraform types; the provider's resources build on
// it.
//
// Sources. Facts marked "confirmed" below were read in ThinkParQ's published
// scripts and sources (beegfs-setup-storage, beegfs-setup-meta,
// beegfs-setup-client, StorageTk's ID file names, the Rust management
// service's main and config) and in the guide. Facts marked "assumed" were
// not found in a source and are written so a wrong guess fails closed.
package beegfs
