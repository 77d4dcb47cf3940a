package fakehost

import (
	"path"
	"slices"
	"strings"
)

// Slurm as Debian 13 packages it, as far as installing it goes: the packages, the slurm
// account and the units. The daemons' behaviour beyond starting is not modelled.
const (
	SlurmVersion = "24.11.5-4"
	slurmUID     = 64030
	slurmConf    = "/etc/slurm/slurm.conf"
)

func addSlurm(h *Host) {
	for _, daemon := range []string{"slurmctld", "slurmd", "slurmdbd"} {
		h.commands[daemon] = slurmDaemon
	}
	h.commands["scontrol"] = scontrol
	h.commands["squeue"] = squeue
	for _, name := range []string{"slurm-client", "slurm-wlm-basic-plugins"} {
		h.AddPackage(name, Package{Version: SlurmVersion, Install: installSlurmCommon})
	}
	for _, daemon := range []string{"slurmctld", "slurmd", "slurmdbd"} {
		h.AddPackage(daemon, Package{Version: SlurmVersion, Install: func(h *Host) {
			installSlurmCommon(h)
			must(h.FS.WriteFile("/usr/sbin/"+daemon, []byte("#!fakehost\n"), 0o755))
			// A daemon refuses to start without slurm.conf, as after a package's first start.
			h.InstallUnit(daemon+".service", func() error {
				if _, err := h.FS.Stat(slurmConf, true); err != nil {
					return err
				}
				return nil
			})
		}})
	}
}

func installSlurmCommon(h *Host) {
	must(h.FS.WriteFile("/usr/bin/scontrol", []byte("#!fakehost\n"), 0o755))
	must(h.FS.WriteFile("/usr/bin/squeue", []byte("#!fakehost\n"), 0o755))
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

// scontrol models ping (slurmctld's unit state), reconfigure (counted as a reload of
// slurmctld) and `show hostnames` under SLURM_CONF, which stands for Slurm's parser: the fake
// checks only that each line is made of KEY=VALUE words, not that Slurm knows the keys.
func scontrol(c *Call) int {
	args := strings.Join(c.Args[1:], " ")
	u := c.Host.Units
	switch {
	case args == "ping":
		if !u.Get("slurmctld").Active {
			c.Printf("Slurmctld(primary) at %s is DOWN\n", c.Host.Name)
			return 1
		}
		c.Printf("Slurmctld(primary) at %s is UP\n", c.Host.Name)
	case args == "reconfigure":
		u.mu.Lock()
		defer u.mu.Unlock()
		s := u.state("slurmctld.service")
		if !s.Active {
			return c.Errorf(1, "Unable to contact slurm controller (connect failure)")
		}
		s.Reloads++
	case args == "show node -o" || (strings.HasPrefix(args, "show node -o ") && len(c.Args) == 5):
		return showNodes(c, c.Args[4:])
	case strings.HasPrefix(args, "update "):
		return updateNode(c, c.Args[2:])
	case strings.HasPrefix(args, "show hostnames "):
		conf := slurmConf
		if v := c.Env.Get("SLURM_CONF"); v.IsSet() {
			conf = v.String()
		}
		if status := parseSlurmConf(c, conf); status != 0 {
			return status
		}
		for _, h := range c.Args[3:] {
			c.Println(h)
		}
	default:
		return c.NotModelled("scontrol " + args)
	}
	return 0
}

func parseSlurmConf(c *Call, conf string) int {
	data, err := c.Host.FS.ReadFile(conf)
	if err != nil {
		return c.Errorf(1, "error: s_p_parse_file: unable to read \"%s\": %s", conf, describe(err))
	}
	for i, l := range lines(data) {
		if j := strings.IndexByte(l, '#'); j >= 0 {
			l = l[:j]
		}
		for _, w := range strings.Fields(l) {
			if k, _, ok := strings.Cut(w, "="); !ok || k == "" {
				return c.Errorf(1, "error: Parsing error at unrecognized key: %s (line %d)", w, i+1)
			}
		}
	}
	return 0
}

// showNodes prints the nodes slurm.conf defines, one line each, all idle: the fake runs no
// slurmd, and drains are not modelled.
func showNodes(c *Call, only []string) int {
	if !c.Host.Units.Get("slurmctld").Active {
		return c.Errorf(1, "slurm_load_node error: Unable to contact slurm controller (connect failure)")
	}
	data, _ := c.Host.FS.ReadFile(slurmConf)
	var nodes []string
	for _, l := range lines(data) {
		for _, w := range strings.Fields(l) {
			if name, ok := strings.CutPrefix(w, "NodeName="); ok && name != "DEFAULT" {
				nodes = append(nodes, name)
			}
		}
	}
	if len(only) == 1 {
		if !slices.Contains(nodes, only[0]) {
			return c.Errorf(1, "Node %s not found", only[0])
		}
		nodes = only
	}
	if len(nodes) == 0 {
		c.Println("No nodes in the system")
	}
	c.Host.mu.Lock()
	defer c.Host.mu.Unlock()
	for _, n := range nodes {
		state, reason := "IDLE", ""
		if r, drained := c.Host.drained[n]; drained {
			state, reason = "IDLE+DRAIN", " Reason="+r
		}
		c.Printf("NodeName=%s Arch=x86_64 CoresPerSocket=%d CPUTot=%d State=%s ThreadsPerCore=2%s\n", n, CPUs/2, CPUs, state, reason)
	}
	return 0
}

// updateNode models `scontrol update nodename=N state=drain reason=R` and state=resume; the
// reason may span several words, as scontrol takes it.
func updateNode(c *Call, args []string) int {
	var node, state string
	var reason []string
	for i, a := range args {
		k, v, _ := strings.Cut(a, "=")
		switch strings.ToLower(k) {
		case "nodename":
			node = v
		case "state":
			state = strings.ToLower(v)
		case "reason":
			reason = append([]string{v}, args[i+1:]...)
		}
		if reason != nil {
			break
		}
	}
	if node == "" || (state != "drain" && state != "resume") {
		return c.NotModelled("scontrol update " + strings.Join(args, " "))
	}
	if !c.Host.Units.Get("slurmctld").Active {
		return c.Errorf(1, "slurm_update error: Unable to contact slurm controller (connect failure)")
	}
	c.Host.mu.Lock()
	defer c.Host.mu.Unlock()
	if state == "drain" {
		c.Host.drained[node] = strings.Join(reason, " ")
	} else {
		delete(c.Host.drained, node)
	}
	return 0
}

// squeue lists no job: the fake runs none. It takes -h, -w NODES, -t STATES and -o FORMAT.
func squeue(c *Call) int {
	if _, _, ok := parseFlags(c, c.Args[1:], "h", "wto", nil); !ok {
		return 127
	}
	if !c.Host.Units.Get("slurmctld").Active {
		return c.Errorf(1, "slurm_load_jobs error: Unable to contact slurm controller (connect failure)")
	}
	return 0
}
