package beegfs

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/units"
)

// HostQuery names everything one resource needs to know about a host. ReadHost
// answers it in a single round trip, whatever its size, and the services from
// the host's shared read of unit states (units.Read).
type HostQuery struct {
	// Packages are Debian package names whose installed version is read.
	Packages []string
	// Services are systemd unit names without ".service".
	Services []string
	// Files are read whole. Never name a secret here: use Fingerprints.
	Files []string
	// Fingerprints are files of which only the SHA-256 leaves the host.
	Fingerprints []string
	// Mounts are paths whose filesystem is looked up; a path that does not
	// exist yet is looked up through its nearest existing ancestor, which is
	// where a directory created now would land.
	Mounts []string
	// Dirs are BeeGFS directories whose ID files are read.
	Dirs []string
	// DropInMounts are systemd units without ".service" whose drop-ins in
	// SystemdUnitDir are read for RequiresMountsFor: any name but that of a
	// target's own (target-N.conf), which guards its target alone and goes
	// when that target is destroyed.
	DropInMounts []string
	// ClientModule asks for the client's kernel module (ModuleState).
	ClientModule bool
}

// HostState is the answer to a HostQuery, keyed by the names asked for.
type HostState struct {
	Packages     map[string]string // version; "" when not installed
	Services     map[string]ServiceState
	Files        map[string]FileState
	Fingerprints map[string]string // hex SHA-256; "" when the file is missing
	// Permissions of the Fingerprints files, "owner:group mode" as stat
	// prints it ("root:root 400"); "" when the file is missing.
	Permissions map[string]string
	Mounts      map[string]Mount
	Dirs        map[string]DirState
	// RequiredMounts are the mountpoints the DropInMounts units' drop-ins
	// require, as systemd adds them up.
	RequiredMounts map[string][]string
	// Module answers ClientModule.
	Module ModuleState
}

// ServiceState is what systemctl says of a unit.
type ServiceState struct {
	Active  string // is-active: active, inactive, failed, activating, ...
	Enabled string // is-enabled: enabled, disabled, not-found, ...
}

// Running reports whether the service is up.
func (s ServiceState) Running() bool { return s.Active == "active" }

// IsEnabled reports whether the service starts at boot.
func (s ServiceState) IsEnabled() bool { return s.Enabled == "enabled" }

// FileState is one file's content as read.
type FileState struct {
	Exists  bool
	Content []byte
}

// SHA256 is the value a conditional write expects to replace.
func (f FileState) SHA256() string {
	if !f.Exists {
		return transport.Absent
	}
	sum := sha256.Sum256(f.Content)
	return hex.EncodeToString(sum[:])
}

// Mount is the filesystem holding a path, as findmnt reports it.
type Mount struct {
	// Path is the existing path that was looked up (the queried path or its
	// nearest existing ancestor).
	Path   string
	Target string // the mountpoint
	Source string
	FSType string
	UUID   string
}

// DirState is a BeeGFS directory and what its files say. Values are kept
// raw; ParseNumID and ParseOriginalNodeID interpret them.
type DirState struct {
	Exists      bool
	Empty       bool
	Format      []byte // format.conf; nil when the file is missing
	TargetNumID []byte
	NodeNumID   []byte
	TargetID    []byte
	// RegistrationToken is the metadata daemon's (8.3 and later).
	RegistrationToken []byte
	// OriginalNodeID is the 7.x string ID BeeGFS 8 keeps as originalNodeID.v7.
	OriginalNodeID []byte
}

// Initialised reports whether the directory holds its node's numeric ID: the
// setup tool's -s wrote it, or the daemon did once it registered.
func (d DirState) Initialised() bool { return d.NodeNumID != nil }

// SetUp reports whether a setup tool or a daemon has prepared the directory:
// it holds format.conf, the daemons' own mark, or (a directory of 7.x, or
// one written by hand) a nodeNumID.
func (d DirState) SetUp() bool { return d.Format != nil || d.Initialised() }

// AwaitsIDs reports a directory the setup tool prepared without -s (and -i),
// whose daemon has never registered: the IDs are not taken yet, and the
// resource's own are what -s and -i would have written.
func (d DirState) AwaitsIDs() bool { return d.Format != nil && !d.Initialised() }

// ReadHost runs one script that answers q. Section keys carry the index of
// the asked item, not the item, so no value ever has to survive the trip as
// a key. The read is shared within the run until the next change on the host
// (transport.Executor.Read): it holds no secret, and nothing polls through it.
//
// Fingerprints of the files units shares come from the host's shared read of unit states and key
// files, which every node makes anyway, not from this script.
func ReadHost(ctx context.Context, ex transport.Executor, q HostQuery) (HostState, error) {
	var shared []string
	own := q
	own.Fingerprints = nil
	for _, f := range q.Fingerprints {
		if units.SharesFile(f) {
			shared = append(shared, f)
		} else {
			own.Fingerprints = append(own.Fingerprints, f)
		}
	}
	st, err := readOwn(ctx, ex, own)
	if err != nil {
		return st, err
	}
	for _, f := range shared {
		file, err := units.ReadFile(ctx, ex, f)
		if err != nil {
			return st, fmt.Errorf("read BeeGFS state: %w", err)
		}
		st.Fingerprints[f] = file.SHA256
		if file.Exists {
			// The form of the script's stat: "%U:%G %a".
			st.Permissions[f] = fmt.Sprintf("%s:%s %o", file.Owner, file.Group, file.Mode)
		}
	}
	return st, nil
}

// readOwn answers q with a script of its own and the host's shared read of unit states.
func readOwn(ctx context.Context, ex transport.Executor, q HostQuery) (HostState, error) {
	script, err := readHostScript(q)
	if err != nil {
		return HostState{}, err
	}
	sections := map[string]transport.Section{}
	if len(q.Packages)+len(q.Files)+len(q.Fingerprints)+len(q.Mounts)+len(q.Dirs)+len(q.DropInMounts) > 0 || q.ClientModule {
		res, err := ex.Read(ctx, script)
		if err != nil {
			return HostState{}, fmt.Errorf("read BeeGFS state: %w", err)
		}
		if sections, err = transport.ParseSections(res.Stdout); err != nil {
			return HostState{}, fmt.Errorf("read BeeGFS state: %w", err)
		}
	}
	st, err := parseHostState(q, sections)
	if err != nil {
		return st, err
	}
	for _, s := range q.Services {
		u, err := units.Read(ctx, ex, s+".service")
		if err != nil {
			return st, fmt.Errorf("read BeeGFS state: %w", err)
		}
		st.Services[s] = ServiceState(u)
	}
	return st, nil
}

func readHostScript(q HostQuery) (string, error) {
	b := transport.NewScript().Text(transport.SectionFuncs + readHostFuncs)
	var reads []string // readFilesPerl's arguments: kind, section key and path of each file
	for i, p := range q.Packages {
		if !transport.PackageNamePattern.MatchString(p) {
			return "", fmt.Errorf("package name %q is not valid", p)
		}
		b.Text(fmt.Sprintf("sec pkg%d dpkg-query -W -f='${db:Status-Abbrev}${Version}' %s 2>/dev/null", i, transport.Quote(p)))
	}
	for _, s := range q.Services {
		if !transport.UnitNamePattern.MatchString(s) {
			return "", fmt.Errorf("unit name %q is not valid", s)
		}
	}
	for i, f := range q.Files {
		if err := ValidatePath(f); err != nil {
			return "", fmt.Errorf("file: %w", err)
		}
		reads = append(reads, "file", "file"+strconv.Itoa(i), f)
	}
	for i, f := range q.Fingerprints {
		if err := ValidatePath(f); err != nil {
			return "", fmt.Errorf("file: %w", err)
		}
		b.Text(fmt.Sprintf("sec sum%d fingerprint %s", i, transport.Quote(f)))
	}
	for i, p := range q.Mounts {
		if err := ValidatePath(p); err != nil {
			return "", fmt.Errorf("mount: %w", err)
		}
		b.Text(fmt.Sprintf("sec mnt%d mountof %s", i, transport.Quote(p)))
	}
	for i, d := range q.Dirs {
		if err := ValidatePath(d); err != nil {
			return "", fmt.Errorf("directory: %w", err)
		}
		key := "dir" + strconv.Itoa(i)
		b.Text(fmt.Sprintf("iddir %s %s", key, transport.Quote(d)))
		for _, f := range idFiles {
			reads = append(reads, "id", key+"."+f, d+"/"+f)
		}
	}
	for i, s := range q.DropInMounts {
		if !transport.UnitNamePattern.MatchString(s) {
			return "", fmt.Errorf("unit name %q is not valid", s)
		}
		b.Text(fmt.Sprintf("requiredmounts req%d %s", i, transport.Quote(SystemdUnitDir+"/"+s+".service.d")))
	}
	if q.ClientModule {
		b.Set("module_glob", moduleGlob).Set("force_build", ForceAutoBuildPath).Text(moduleRead + "sec " + moduleSection + " clientmodule")
	}
	if len(reads) > 0 {
		b.Command(append([]string{"perl", "-e", readFilesPerl, "--"}, reads...)...)
	}
	return b.String(), nil
}

// idFiles are the files of a BeeGFS directory that say what it is and which IDs it holds.
var idFiles = []string{TargetNumIDFile, NodeNumIDFile, FormatFile, TargetIDFile, RegistrationTokenFile, OriginalNodeIDV7File}

// readFilesPerl prints, in one process for all of them, the files that a base64 process each
// would cost: perl is on every host, as the root shell runs in it, but perl-base has no
// MIME::Base64, so the content travels as hex, which survives the sections' dropping of blank
// lines as base64 does. Its arguments are triples of kind,
// section key and path: a "file" that does not exist has status 3, an "id" file that is not
// a regular file has no section, as setup tools never wrote it; a file that cannot be read
// has status 1.
var readFilesPerl = transport.PerlSections + readFilesPl

//go:embed read_files.pl
var readFilesPl string

// readHostFuncs are the shell helpers of readHostScript; status 3 marks a
// missing file or directory, which is an answer, not a failure. mountof and
// iddir use the shell's parameter expansion and globbing where dirname and ls
// would each cost a process (and iddir and requiredmounts print their sections
// themselves, as sec's capture of a function would cost one; requiredmounts
// reads every drop-in with one sed): ValidatePath's clean absolute paths are what
// ${p%/*} takes apart as dirname does, and the three patterns match every
// entry but . and .., as ls -A lists them (-L for a dangling symlink).
//
//go:embed read_host.sh
var readHostFuncs string

func parseHostState(q HostQuery, sections map[string]transport.Section) (HostState, error) {
	st := HostState{
		Packages:       map[string]string{},
		Services:       map[string]ServiceState{},
		Files:          map[string]FileState{},
		Fingerprints:   map[string]string{},
		Permissions:    map[string]string{},
		Mounts:         map[string]Mount{},
		Dirs:           map[string]DirState{},
		RequiredMounts: map[string][]string{},
	}
	get := func(key string) (transport.Section, error) {
		s, ok := sections[key]
		if !ok {
			return s, fmt.Errorf("read BeeGFS state: no answer for %s", key)
		}
		return s, nil
	}
	for i, p := range q.Packages {
		s, err := get("pkg" + strconv.Itoa(i))
		if err != nil {
			return st, err
		}
		st.Packages[p] = installedVersion(s)
	}
	if err := parseIndexed(q.Files, "file", get, parseFile, st.Files); err != nil {
		return st, err
	}
	for i, f := range q.Fingerprints {
		s, err := get("sum" + strconv.Itoa(i))
		if err != nil {
			return st, err
		}
		sum, perm, err := parseFingerprint(f, s)
		if err != nil {
			return st, err
		}
		st.Fingerprints[f] = sum
		st.Permissions[f] = perm
	}
	if err := parseIndexed(q.Mounts, "mnt", get, parseMount, st.Mounts); err != nil {
		return st, err
	}
	for i, d := range q.Dirs {
		key := "dir" + strconv.Itoa(i)
		s, err := get(key)
		if err != nil {
			return st, err
		}
		if st.Dirs[d], err = parseDir(d, s, key, sections); err != nil {
			return st, err
		}
	}
	if err := parseIndexed(q.DropInMounts, "req", get, parseDropInMounts, st.RequiredMounts); err != nil {
		return st, err
	}
	if q.ClientModule {
		s, err := get(moduleSection)
		if err != nil {
			return st, err
		}
		if st.Module, err = parseModule(s); err != nil {
			return st, err
		}
	}
	return st, nil
}

// parseIndexed stores under each item parse's reading of its section, the one named prefix
// and the item's index, as the query script names them.
func parseIndexed[V any](items []string, prefix string, get func(string) (transport.Section, error),
	parse func(string, transport.Section) (V, error), into map[string]V) error {
	for i, item := range items {
		s, err := get(prefix + strconv.Itoa(i))
		if err != nil {
			return err
		}
		v, err := parse(item, s)
		if err != nil {
			return err
		}
		into[item] = v
	}
	return nil
}

func parseDropInMounts(unit string, s transport.Section) ([]string, error) {
	if s.Status != 0 {
		return nil, fmt.Errorf("read the drop-ins of %s: exit status %d", unit, s.Status)
	}
	return requiredMounts(s.Lines), nil
}

// requiredMounts adds up RequiresMountsFor lines ("=" and the value) in the
// order systemd reads the drop-ins: each adds its paths, and an empty
// assignment drops those before it.
func requiredMounts(lines []string) []string {
	var mounts []string
	for _, line := range lines {
		value := strings.TrimPrefix(line, "=")
		if strings.TrimSpace(value) == "" {
			mounts = nil
			continue
		}
		mounts = append(mounts, strings.Fields(value)...)
	}
	return mounts
}

// installedVersion reads dpkg-query's "ii 8.4.0": only an installed package
// (status abbreviation starting "ii") has a version that counts.
func installedVersion(s transport.Section) string {
	if s.Status != 0 || len(s.Lines) == 0 {
		return ""
	}
	abbrev, version, ok := strings.Cut(s.Lines[0], " ")
	if !ok || !strings.HasPrefix(abbrev, "ii") {
		return ""
	}
	return strings.TrimSpace(version)
}

func parseFile(name string, s transport.Section) (FileState, error) {
	switch s.Status {
	case 3:
		return FileState{}, nil
	case 0:
	default:
		return FileState{}, fmt.Errorf("read %s: exit status %d", name, s.Status)
	}
	content, err := hex.DecodeString(strings.Join(s.Lines, ""))
	if err != nil {
		return FileState{}, fmt.Errorf("read %s: %w", name, err)
	}
	return FileState{Exists: true, Content: content}, nil
}

var sha256Line = regexp.MustCompile(`^[0-9a-f]{64}$`)

func parseFingerprint(name string, s transport.Section) (sum, perm string, err error) {
	switch s.Status {
	case 3:
		return "", "", nil
	case 0:
	default:
		return "", "", fmt.Errorf("fingerprint %s: exit status %d", name, s.Status)
	}
	// sha256sum reads stdin, so it prints "HASH  -": the hash is cut here, not by a cut
	// process on every node in every plan.
	if len(s.Lines) != 2 {
		return "", "", fmt.Errorf("fingerprint %s: unexpected sha256sum and stat output", name)
	}
	sum, rest, _ := strings.Cut(s.Lines[0], " ")
	if !sha256Line.MatchString(sum) || strings.TrimSpace(rest) != "-" {
		return "", "", fmt.Errorf("fingerprint %s: unexpected sha256sum and stat output", name)
	}
	return sum, s.Lines[1], nil
}

// pairField matches one KEY="value" of findmnt -P.
var pairField = regexp.MustCompile(`([A-Z]+)="((?:[^"\\]|\\.)*)"`)

func parseMount(name string, s transport.Section) (Mount, error) {
	if s.Status != 0 || len(s.Lines) < 2 {
		return Mount{}, fmt.Errorf("find the filesystem of %s: findmnt exited with status %d", name, s.Status)
	}
	m := Mount{Path: strings.TrimPrefix(s.Lines[0], "path=")}
	for _, f := range pairField.FindAllStringSubmatch(s.Lines[1], -1) {
		value := unescapeFindmnt(f[2])
		switch f[1] {
		case "TARGET":
			m.Target = value
		case "SOURCE":
			m.Source = value
		case "FSTYPE":
			m.FSType = value
		case "UUID":
			m.UUID = value
		}
	}
	if m.Target == "" {
		return Mount{}, fmt.Errorf("find the filesystem of %s: findmnt printed no mountpoint", name)
	}
	return m, nil
}

// unescapeFindmnt undoes findmnt's \xNN escapes of blanks and quotes.
func unescapeFindmnt(s string) string {
	if !strings.Contains(s, `\x`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			if n, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// parseDir reads iddir's section and readFilesPerl's of the ID files, key.NAME, there only
// for the files that exist.
func parseDir(name string, s transport.Section, key string, sections map[string]transport.Section) (DirState, error) {
	switch s.Status {
	case 3:
		return DirState{}, nil
	case 0:
	default:
		return DirState{}, fmt.Errorf("read %s: exit status %d", name, s.Status)
	}
	if len(s.Lines) == 0 {
		return DirState{}, fmt.Errorf("read %s: no answer", name)
	}
	d := DirState{Exists: true, Empty: s.Lines[0] == "empty"}
	for _, f := range idFiles {
		sec, ok := sections[key+"."+f]
		if !ok {
			continue
		}
		file, err := parseFile(name+"/"+f, sec)
		if err != nil {
			return DirState{}, err
		}
		if !file.Exists {
			continue // gone since perl's -f
		}
		*dirField(&d, f) = file.Content
	}
	return d, nil
}

// dirField is where DirState keeps the content of the file named f of idFiles.
func dirField(d *DirState, f string) *[]byte {
	switch f {
	case TargetNumIDFile:
		return &d.TargetNumID
	case NodeNumIDFile:
		return &d.NodeNumID
	case FormatFile:
		return &d.Format
	case TargetIDFile:
		return &d.TargetID
	case RegistrationTokenFile:
		return &d.RegistrationToken
	default:
		return &d.OriginalNodeID
	}
}
