package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// goreleaserConfig is the part of .goreleaser.yml this repository uses. Decoding with
// KnownFields refuses a key it does not list, so a misspelt key fails here, not at release.
type goreleaserConfig struct {
	Version int `yaml:"version"`
	Before  struct {
		Hooks []string `yaml:"hooks"`
	} `yaml:"before"`
	Builds []struct {
		Env          []string   `yaml:"env"`
		ModTimestamp string     `yaml:"mod_timestamp"`
		Flags        []string   `yaml:"flags"`
		Ldflags      []string   `yaml:"ldflags"`
		Goos         []string   `yaml:"goos"`
		Goarch       []string   `yaml:"goarch"`
		Ignore       []platform `yaml:"ignore"`
		Binary       string     `yaml:"binary"`
	} `yaml:"builds"`
	Archives []struct {
		Formats      []string `yaml:"formats"`
		NameTemplate string   `yaml:"name_template"`
	} `yaml:"archives"`
	Checksum struct {
		ExtraFiles   []extraFile `yaml:"extra_files"`
		NameTemplate string      `yaml:"name_template"`
		Algorithm    string      `yaml:"algorithm"`
	} `yaml:"checksum"`
	Signs []struct {
		Artifacts string   `yaml:"artifacts"`
		Args      []string `yaml:"args"`
	} `yaml:"signs"`
	Release struct {
		ExtraFiles []extraFile `yaml:"extra_files"`
	} `yaml:"release"`
	Changelog struct {
		Disable bool `yaml:"disable"`
	} `yaml:"changelog"`
}

type platform struct {
	Goos   string `yaml:"goos"`
	Goarch string `yaml:"goarch"`
}

type extraFile struct {
	Glob         string `yaml:"glob"`
	NameTemplate string `yaml:"name_template"`
}

func loadGoreleaserConfig(t *testing.T) goreleaserConfig {
	t.Helper()
	raw, err := os.ReadFile(".goreleaser.yml")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	var cfg goreleaserConfig
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf(".goreleaser.yml: %v", err)
	}
	if len(cfg.Builds) != 1 || len(cfg.Archives) != 1 {
		t.Fatalf(".goreleaser.yml: %d builds and %d archives, want one of each", len(cfg.Builds), len(cfg.Archives))
	}
	return cfg
}

// The Terraform Registry takes a release only in this layout: zips named
// NAME_VERSION_OS_ARCH, a SHA256SUMS file with its signature, and the manifest beside them.
func TestGoreleaserConfigMakesRegistryRelease(t *testing.T) {
	cfg := loadGoreleaserConfig(t)
	build, archive := cfg.Builds[0], cfg.Archives[0]
	checks := []struct {
		ok   bool
		what string
	}{
		{cfg.Version == 2, "version: 2"},
		{slices.Contains(cfg.Before.Hooks, "go mod tidy"), "a go mod tidy before-hook"},
		{slices.Contains(build.Env, "CGO_ENABLED=0"), "CGO_ENABLED=0"},
		{len(build.Ldflags) == 1 && strings.Contains(build.Ldflags[0], "-X main.version={{ .Version }}") &&
			strings.Contains(build.Ldflags[0], "-X main.commit={{ .Commit }}"), "ldflags setting main.version and main.commit"},
		{build.Binary == "{{ .ProjectName }}_v{{ .Version }}", "the binary named NAME_vVERSION"},
		{slices.Equal(archive.Formats, []string{"zip"}) && archive.NameTemplate == "{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}", "zip archives named NAME_VERSION_OS_ARCH"},
		{cfg.Checksum.Algorithm == "sha256" && cfg.Checksum.NameTemplate == "{{ .ProjectName }}_{{ .Version }}_SHA256SUMS", "a sha256 NAME_VERSION_SHA256SUMS"},
		{len(cfg.Signs) == 1 && cfg.Signs[0].Artifacts == "checksum", "a signature of the checksum file"},
		{manifestIncluded(cfg.Checksum.ExtraFiles) && manifestIncluded(cfg.Release.ExtraFiles), "the registry manifest in the checksums and the release"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf(".goreleaser.yml lacks %s", c.what)
		}
	}
}

func manifestIncluded(files []extraFile) bool {
	return slices.ContainsFunc(files, func(f extraFile) bool {
		return f.Glob == "terraform-registry-manifest.json" && f.NameTemplate == "{{ .ProjectName }}_{{ .Version }}_manifest.json"
	})
}

// Every release target must resolve the provider's whole import graph: a dependency without
// support for one of them would otherwise be found only by the release build.
func TestEveryReleaseTargetResolves(t *testing.T) {
	cfg := loadGoreleaserConfig(t)
	build := cfg.Builds[0]
	want := []string{"darwin/amd64", "darwin/arm64", "freebsd/386", "freebsd/amd64", "freebsd/arm", "freebsd/arm64",
		"linux/386", "linux/amd64", "linux/arm", "linux/arm64", "windows/386", "windows/amd64", "windows/arm64"}
	var targets []string
	for _, goos := range build.Goos {
		for _, goarch := range build.Goarch {
			if !slices.Contains(build.Ignore, platform{goos, goarch}) {
				targets = append(targets, goos+"/"+goarch)
			}
		}
	}
	slices.Sort(targets)
	if !slices.Equal(targets, want) {
		t.Errorf("release targets %v, want the scaffolding's that Go supports, %v", targets, want)
	}
	for _, target := range targets {
		goos, goarch, _ := strings.Cut(target, "/")
		if problems := unresolvedImports(t, goos, goarch); len(problems) > 0 {
			t.Errorf("%s: %s", target, strings.Join(problems, "; "))
		}
	}
}

func unresolvedImports(t *testing.T, goos, goarch string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-deps", "-json=ImportPath,Error", ".")
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0", "GOPROXY=off")
	out, err := cmd.Output()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			t.Fatalf("go list for %s/%s: %v: %s", goos, goarch, err, exitErr.Stderr)
		}
		t.Fatal(err)
	}
	var problems []string
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var pkg struct {
			ImportPath string
			Error      *struct{ Err string }
		}
		if err := dec.Decode(&pkg); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if pkg.Error != nil {
			problems = append(problems, pkg.ImportPath+": "+pkg.Error.Err)
		}
	}
	return problems
}

// releaseWorkflow is the part of .github/workflows/release.yml a release depends on.
type releaseWorkflow struct {
	On struct {
		Push struct {
			Tags []string `yaml:"tags"`
		} `yaml:"push"`
	} `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Jobs        map[string]struct {
		Steps []workflowStep `yaml:"steps"`
	} `yaml:"jobs"`
}

type workflowStep struct {
	ID   string            `yaml:"id"`
	Uses string            `yaml:"uses"`
	With map[string]any    `yaml:"with"`
	Env  map[string]string `yaml:"env"`
}

// A pushed version tag must produce what the goreleaser configuration promises: the whole
// history for the version, Go from go.mod, a signing key whose fingerprint reaches the
// signs step, and actions that a moved tag cannot change.
func TestReleaseWorkflowRunsGoreleaserSigned(t *testing.T) {
	raw, err := os.ReadFile(".github/workflows/release.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf releaseWorkflow
	if err := yaml.Unmarshal(raw, &wf); err != nil {
		t.Fatalf("release.yml: %v", err)
	}
	if !slices.Equal(wf.On.Push.Tags, []string{"v*"}) || wf.Permissions["contents"] != "write" {
		t.Errorf("release.yml must run on pushed v* tags with contents: write, has tags %v and permissions %v", wf.On.Push.Tags, wf.Permissions)
	}
	if len(wf.Jobs) != 1 {
		t.Fatalf("release.yml has %d jobs, want one", len(wf.Jobs))
	}
	var steps []workflowStep
	for _, job := range wf.Jobs {
		steps = job.Steps
	}
	byAction := map[string]workflowStep{}
	for _, s := range steps {
		action, ref, _ := strings.Cut(s.Uses, "@")
		if len(ref) != 40 || strings.Trim(ref, "0123456789abcdef") != "" {
			t.Errorf("release.yml: %s is not pinned to a full commit", s.Uses)
		}
		byAction[action] = s
	}
	checkout, setupGo := byAction["actions/checkout"], byAction["actions/setup-go"]
	gpg, goreleaser := byAction["crazy-max/ghaction-import-gpg"], byAction["goreleaser/goreleaser-action"]
	checks := []struct {
		ok   bool
		what string
	}{
		{checkout.With["fetch-depth"] == 0, "a checkout with fetch-depth: 0"},
		{setupGo.With["go-version-file"] == "go.mod", "Go set up from go.mod"},
		{gpg.ID != "" && gpg.With["gpg_private_key"] == "${{ secrets.GPG_PRIVATE_KEY }}", "a GPG key imported from secrets.GPG_PRIVATE_KEY"},
		{goreleaser.With["args"] == "release --clean", "goreleaser release --clean"},
		{goreleaser.Env["GPG_FINGERPRINT"] == "${{ steps."+gpg.ID+".outputs.fingerprint }}", "GPG_FINGERPRINT from the import step, which .goreleaser.yml signs with"},
		{goreleaser.Env["GITHUB_TOKEN"] == "${{ secrets.GITHUB_TOKEN }}", "GITHUB_TOKEN for the upload"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("release.yml lacks %s", c.what)
		}
	}
	if cfg := loadGoreleaserConfig(t); !slices.Contains(cfg.Signs[0].Args, "{{ .Env.GPG_FINGERPRINT }}") {
		t.Error(".goreleaser.yml does not sign with the GPG_FINGERPRINT the workflow passes")
	}
}
