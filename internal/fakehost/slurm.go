package fakehost

import (
	"path"
	"strings"
)

// Slurm as Debian 13 packages it, as far as installing it goes: the packages, the slurm
// account and the units. The daemons' behaviour beyond starting is not modelled.
const (
	SlurmVersion = "24.11.5-4"
	slurmUID     = 64030
)

func addSlurm(h *Host) {
	for _, daemon := range []string{"slurmctld", "slurmd", "slurmdbd"} {
		h.commands[daemon] = slurmDaemon
	}
	for _, name := range []string{"slurm-client", "slurm-wlm-basic-plugins"} {
		h.AddPackage(name, Package{Version: SlurmVersion, Install: installSlurmCommon})
	}
	for _, daemon := range []string{"slurmctld", "slurmd", "slurmdbd"} {
		h.AddPackage(daemon, Package{Version: SlurmVersion, Install: func(h *Host) {
			installSlurmCommon(h)
			must(h.FS.WriteFile("/usr/sbin/"+daemon, []byte("#!fakehost\n"), 0o755))
			h.InstallUnit(daemon+".service", nil)
		}})
	}
}

func installSlurmCommon(h *Host) {
	h.addSystemAccount("slurm", slurmUID, "/nonexistent")
	for _, d := range []string{"/etc/slurm", "/var/lib/slurm", "/var/log/slurm"} {
		must(h.FS.MkdirAll(d, 0o755))
	}
	must(h.FS.Chown("/var/lib/slurm", slurmUID, slurmUID))
	must(h.FS.Chown("/var/log/slurm", slurmUID, slurmUID))
}

// slurmDaemon answers -V (the version) and, for slurmd, -C (the node's hardware as slurm.conf
// would declare it); running a daemon in the foreground is not modelled.
func slurmDaemon(c *Call) int {
	name := path.Base(c.Args[0])
	switch {
	case len(c.Args) == 2 && c.Args[1] == "-V":
		version, _, _ := strings.Cut(SlurmVersion, "-")
		c.Println("slurm " + version)
	case len(c.Args) == 2 && c.Args[1] == "-C" && name == "slurmd":
		c.Printf("NodeName=%s CPUs=%d Boards=1 SocketsPerBoard=1 CoresPerSocket=%d ThreadsPerCore=2 RealMemory=%d\nUpTime=0-01:00:00\n",
			c.Host.Name, CPUs, CPUs/2, MemTotalKiB/1024)
	default:
		return c.NotModelled(name + " " + strings.Join(c.Args[1:], " "))
	}
	return 0
}
