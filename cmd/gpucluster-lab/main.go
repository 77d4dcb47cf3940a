package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
)

const usage = `usage:
  gpucluster-lab deps [--install]
  gpucluster-lab image
  gpucluster-lab up [--gpus N]
  gpucluster-lab add gpuNN
  gpucluster-lab remove gpuNN
  gpucluster-lab reboot HOST
  gpucluster-lab stop gpuNN
  gpucluster-lab start gpuNN
  gpucluster-lab disk-detach HOST
  gpucluster-lab disk-attach HOST
  gpucluster-lab disk HOST
  gpucluster-lab exec HOST -- CMD...
  gpucluster-lab status
  gpucluster-lab hosts
  gpucluster-lab tfvars
  gpucluster-lab down

environment:
  GPUCLUSTER_LAB_INSTANCE=NAME  run a separate lab beside the default one
  GPUCLUSTER_LAB_RELEASE=NAME   Debian release of the image and hosts: trixie (default) or forky
  GPUCLUSTER_LAB=PATH           descriptor path (default /run/gpucluster-lab[-NAME]/lab.json)
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := dispatch(ctx, os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "gpucluster-lab %s: %v\n", os.Args[1], err)
		var exit exitCode
		if errors.As(err, &exit) {
			os.Exit(int(exit))
		}
		os.Exit(1)
	}
}

// exitCode passes a command's own exit status through `exec`.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func dispatch(ctx context.Context, command string, args []string) error {
	switch command {
	case "deps":
		return deps(ctx, args)
	case "image":
		return image(ctx)
	case "up":
		return up(ctx, args)
	case "add":
		return add(ctx, args)
	case "remove":
		return remove(ctx, args)
	case "reboot":
		return onHost(args, func(l *lab.Lab, host string) error { return l.Reboot(ctx, host) })
	case "stop":
		return onHost(args, func(l *lab.Lab, host string) error { return l.Stop(ctx, host) })
	case "start":
		return onHost(args, func(l *lab.Lab, host string) error { return l.Start(ctx, host) })
	case "disk-detach":
		return onHost(args, func(l *lab.Lab, host string) error { return l.DetachDisk(ctx, host) })
	case "disk-attach":
		return onHost(args, func(l *lab.Lab, host string) error { return l.AttachDisk(ctx, host) })
	case "disk":
		return onHost(args, printDisk)
	case "exec":
		return execCmd(ctx, args)
	case "status":
		return status()
	case "hosts":
		return hosts()
	case "tfvars":
		return tfvars()
	case "down":
		inst, path, err := selected()
		if err != nil {
			return err
		}
		return lab.Down(inst, path, os.Stdout)
	default:
		fmt.Fprint(os.Stderr, usage)
		return fmt.Errorf("unknown command %q", command)
	}
}

// selected returns the lab instance and descriptor path the environment selects.
func selected() (lab.Instance, string, error) {
	inst, err := lab.InstanceFromEnv()
	if err != nil {
		return inst, "", err
	}
	path, err := lab.DescriptorPath()
	return inst, path, err
}

func loadSelected() (*lab.Lab, error) {
	path, err := lab.DescriptorPath()
	if err != nil {
		return nil, err
	}
	return lab.Load(path)
}

func deps(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("deps", flag.ContinueOnError)
	install := fs.Bool("install", false, "install missing packages with apt-get")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *install {
		return lab.InstallDependencies(ctx, os.Stdout)
	}
	if missing := lab.MissingPackages(); len(missing) > 0 {
		return fmt.Errorf("missing packages: %s (run `gpucluster-lab deps --install`)", strings.Join(missing, " "))
	}
	fmt.Println("all lab dependencies are installed")
	return nil
}

func image(ctx context.Context) error {
	if err := lab.InstallDependencies(ctx, os.Stdout); err != nil {
		return err
	}
	release, err := lab.ReleaseFromEnv()
	if err != nil {
		return err
	}
	_, err = lab.BuildImage(ctx, release, os.Stdout)
	return err
}

func up(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	gpus := fs.Int("gpus", 2, fmt.Sprintf("number of GPU servers (1..%d)", lab.MaxGPUServers))
	if err := fs.Parse(args); err != nil {
		return err
	}
	inst, path, err := selected()
	if err != nil {
		return err
	}
	release, err := lab.ReleaseFromEnv()
	if err != nil {
		return err
	}
	l, err := lab.Up(ctx, inst, release, path, *gpus, os.Stdout)
	if err != nil {
		return err
	}
	// Recorded so that tests inside the lab's netns can add and remove hosts
	// through this command (see lab.Lab.Command).
	if l.Command, err = os.Executable(); err != nil {
		return fmt.Errorf("find the lab command: %w", err)
	}
	if err := l.Save(path); err != nil {
		return err
	}
	printHosts(l)
	return nil
}

func add(ctx context.Context, args []string) error {
	return resize(args, func(l *lab.Lab, host string) error {
		_, err := l.Add(ctx, host, os.Stdout)
		return err
	})
}

func remove(ctx context.Context, args []string) error {
	return resize(args, func(l *lab.Lab, host string) error { return l.Remove(ctx, host, os.Stdout) })
}

// resize adds or removes the GPU server named in args, then lists the lab's hosts.
func resize(args []string, change func(l *lab.Lab, host string) error) error {
	return onHostNamed(args, "gpu03", func(l *lab.Lab, host string) error {
		if err := change(l, host); err != nil {
			return err
		}
		printHosts(l)
		return nil
	})
}

// onHost runs do for the one host of the lab named in args.
func onHost(args []string, do func(l *lab.Lab, host string) error) error {
	return onHostNamed(args, "gpu01", do)
}

// onHostNamed is onHost whose usage error gives example as the host name.
func onHostNamed(args []string, example string, do func(l *lab.Lab, host string) error) error {
	if len(args) != 1 {
		return errors.New("want exactly one host name, e.g. " + example)
	}
	l, err := loadSelected()
	if err != nil {
		return err
	}
	return do(l, args[0])
}

func printDisk(l *lab.Lab, host string) error {
	d, err := l.Disk(host)
	if err != nil {
		return err
	}
	state := "attached"
	if d.Detached {
		state = "detached"
	}
	fmt.Printf("%s %s UUID=%s %s %s (%s)\n", host, d.Mountpoint, d.UUID, state, d.LoopDevice, d.Image)
	return nil
}

func execCmd(ctx context.Context, args []string) error {
	if len(args) < 3 || args[1] != "--" {
		return errors.New("usage: gpucluster-lab exec HOST -- COMMAND [ARGS]")
	}
	l, err := loadSelected()
	if err != nil {
		return err
	}
	status, err := l.Run(ctx, args[0], args[2:], os.Stdin, os.Stdout, os.Stderr)
	if err != nil {
		return err
	}
	if status != 0 {
		return exitCode(status)
	}
	return nil
}

func status() error {
	l, err := loadSelected()
	if err != nil {
		return err
	}
	path, err := lab.DescriptorPath()
	if err != nil {
		return err
	}
	fmt.Printf("descriptor: %s\n", path)
	printHosts(l)
	return nil
}

func printHosts(l *lab.Lab) {
	for _, h := range l.Hosts {
		fmt.Printf("%-8s %-11s %-5s pid %d\n", h.Name, h.Address, h.Role, h.PID)
	}
	fmt.Printf("known_hosts: %s\nadmin key: %s\nclients run inside: ip netns exec %s ...\n", l.KnownHostsPath, l.AdminKeyPath, l.Netns)
}

func hosts() error {
	l, err := loadSelected()
	if err != nil {
		return err
	}
	for _, h := range l.Hosts {
		fmt.Println(h.Name)
	}
	return nil
}

// tfvars prints JSON rather than shell assignments so that no value ever passes through
// shell quoting; it holds the sudo password, so callers write it with umask 077.
func tfvars() error {
	l, err := loadSelected()
	if err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(l.TFVars())
}
