package beegfs

import (
	"reflect"
	"strings"
	"testing"
)

const (
	uuidData  = "5f0c7a52-3b1e-4c8e-9d2a-1f6b8e4c2d10"
	uuidData2 = "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	uuidNew   = "11111111-2222-4333-8444-555555555555"
)

func confFromText(t *testing.T, text string) *Conf {
	t.Helper()
	c, err := ParseConf([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestStorageTargets(t *testing.T) {
	tests := []struct {
		name    string
		conf    *Conf
		want    []StorageTarget
		wantErr string
	}{
		{"shipped: no targets", parseFixture(t, "beegfs-storage.conf"), nil, ""},
		{"after setup", parseFixture(t, "storage-after-setup.conf"),
			[]StorageTarget{{"/data/beegfs-storage", uuidData}}, ""},
		{"two targets in the setup script's ' ,' form", parseFixture(t, "storage-two-targets.conf"),
			[]StorageTarget{{"/data/beegfs-storage", uuidData}, {"/data2/beegfs-storage", uuidData2}}, ""},
		// beegfs-setup-storage -r replaces the directory list with the bare path and
		// still appends " ,UUID" to the UUID list.
		{"-r form: directory list without the leading comma",
			confFromText(t, "storeStorageDirectory = /a\nstoreFsUUID = ,"+uuidData+"\n"),
			[]StorageTarget{{"/a", uuidData}}, ""},
		{"UUID list without the leading comma",
			confFromText(t, "storeStorageDirectory = ,/a\nstoreFsUUID = "+uuidData+"\n"),
			[]StorageTarget{{"/a", uuidData}}, ""},
		{"-u form: no UUIDs, so no check",
			confFromText(t, "storeStorageDirectory = /a, /b\nstoreFsUUID =\n"),
			[]StorageTarget{{"/a", ""}, {"/b", ""}}, ""},
		{"empty elements anywhere are dropped, as the daemon drops them",
			confFromText(t, "storeStorageDirectory = ,/a,,/b,\nstoreFsUUID = "+uuidData+",,"+uuidData2+"\n"),
			[]StorageTarget{{"/a", uuidData}, {"/b", uuidData2}}, ""},
		{"UUID missing for the second directory",
			confFromText(t, "storeStorageDirectory = ,/a,/b\nstoreFsUUID = ,"+uuidData+"\n"),
			nil, "storeStorageDirectory lists 2 directories [/a /b] but storeFsUUID lists 1 UUIDs"},
		{"an empty UUID entry does not stand for an unchecked directory",
			confFromText(t, "storeStorageDirectory = ,/a,/b\nstoreFsUUID = ,,"+uuidData+"\n"),
			nil, "storeStorageDirectory lists 2 directories [/a /b] but storeFsUUID lists 1 UUIDs"},
		{"directory listed twice",
			confFromText(t, "storeStorageDirectory = ,/a,/a\nstoreFsUUID = ,"+uuidData+","+uuidData2+"\n"),
			nil, "lists /a twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := StorageTargets(tt.conf)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSetStorageTarget(t *testing.T) {
	tests := []struct {
		name     string
		fixture  string
		target   StorageTarget
		wantDirs string
		wantUUID string
	}{
		{"first target on a shipped config", "beegfs-storage.conf",
			StorageTarget{"/data/beegfs-storage", uuidData}, ",/data/beegfs-storage", "," + uuidData},
		{"same target again changes nothing", "storage-after-setup.conf",
			StorageTarget{"/data/beegfs-storage", uuidData}, ",/data/beegfs-storage", "," + uuidData},
		{"new UUID for a listed directory keeps its place, and the unchanged list its form", "storage-two-targets.conf",
			StorageTarget{"/data/beegfs-storage", uuidNew},
			",/data/beegfs-storage ,/data2/beegfs-storage", "," + uuidNew + "," + uuidData2},
		{"second target appended to both lists", "storage-after-setup.conf",
			StorageTarget{"/data2/beegfs-storage", uuidData2},
			",/data/beegfs-storage,/data2/beegfs-storage", "," + uuidData + "," + uuidData2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := parseFixture(t, tt.fixture)
			if err := SetStorageTarget(c, tt.target); err != nil {
				t.Fatal(err)
			}
			for key, want := range map[string]string{
				KeyStorageDirectory:  tt.wantDirs,
				KeyFsUUID:            tt.wantUUID,
				KeyAllowFirstRunInit: "false",
			} {
				if got, _ := c.Get(key); got != want {
					t.Errorf("%s = %q, want %q", key, got, want)
				}
			}
			if _, err := CheckStorageInterlock(c, tt.target.Directory); err != nil {
				t.Errorf("interlock check after Set: %v", err)
			}
			if comments := strings.Count(string(c.Bytes()), "#"); comments != strings.Count(string(readFixture(t, tt.fixture)), "#") {
				t.Error("comments lost")
			}
		})
	}
}

// A file as the real setup script writes it (-r: the bare path; -u: no UUID) is
// left byte for byte as it is when it already says what the provider would write.
func TestSetStorageTargetKeepsTheSetupScriptsForm(t *testing.T) {
	tests := []struct {
		name, text string
		target     StorageTarget
		wantText   string
	}{
		{"-r form, in sync", "storeStorageDirectory        = /a\nstoreAllowFirstRunInit       = false\nstoreFsUUID                  = ," + uuidData + "\n",
			StorageTarget{"/a", uuidData}, ""},
		{"-u form, in sync", "storeStorageDirectory        = ,/a\nstoreAllowFirstRunInit       = false\nstoreFsUUID                  =\n",
			StorageTarget{"/a", ""}, ""},
		{"-r and -u form gets its UUID", "storeStorageDirectory = /a\nstoreAllowFirstRunInit = false\nstoreFsUUID =\n",
			StorageTarget{"/a", uuidData}, "storeStorageDirectory = /a\nstoreAllowFirstRunInit = false\nstoreFsUUID = ," + uuidData + "\n"},
		{"-u form gets a second unchecked target", "storeStorageDirectory = /a\nstoreAllowFirstRunInit = false\nstoreFsUUID =\n",
			StorageTarget{"/b", ""}, "storeStorageDirectory = ,/a,/b\nstoreAllowFirstRunInit = false\nstoreFsUUID =\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := confFromText(t, tt.text)
			if err := SetStorageTarget(c, tt.target); err != nil {
				t.Fatal(err)
			}
			want := tt.wantText
			if want == "" {
				want = tt.text
			}
			if got := string(c.Bytes()); got != want {
				t.Errorf("file became\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// beegfs-setup-meta -u leaves storeFsUUID empty, which the daemon does not check.
func TestMetaInterlockWithoutUUID(t *testing.T) {
	text := "storeMetaDirectory           = /beegfs/meta\nstoreAllowFirstRunInit       = false\nstoreFsUUID                  =\n"
	c := confFromText(t, text)
	got, err := CheckMetaInterlock(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := (StorageTarget{"/beegfs/meta", ""}); got != want {
		t.Errorf("got %v, want %v", got, want)
	}
	if err := SetMetaInterlock(c, got); err != nil {
		t.Fatal(err)
	}
	if string(c.Bytes()) != text {
		t.Errorf("keeping the interlock as it is rewrote the file:\n%s", c.Bytes())
	}
}

func TestSetStorageTargetRefuses(t *testing.T) {
	misaligned := "storeStorageDirectory = ,/a,/b\nstoreFsUUID = ," + uuidData + "\n"
	tests := []struct {
		name, text string
		target     StorageTarget
		wantErr    string
	}{
		{"misaligned file", misaligned, StorageTarget{"/c", uuidNew}, "refusing to edit"},
		{"comma in directory", "", StorageTarget{"/a,b", uuidNew}, "must not contain a comma"},
		{"relative directory", "", StorageTarget{"data", uuidNew}, "clean absolute path"},
		{"unclean directory", "", StorageTarget{"/data/../etc", uuidNew}, "clean absolute path"},
		{"root directory", "", StorageTarget{"/", uuidNew}, "clean absolute path"},
		{"UUID with comma", "", StorageTarget{"/data", uuidData + "," + uuidNew}, "not a filesystem UUID"},
		{"UUID for one target while another has none", "storeStorageDirectory = /a\nstoreFsUUID =\n",
			StorageTarget{"/b", uuidNew}, "none for /a"},
		{"no UUID for one target while another has one", "storeStorageDirectory = /a\nstoreFsUUID = ," + uuidData + "\n",
			StorageTarget{"/b", ""}, "none for /b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := confFromText(t, tt.text)
			before := string(c.Bytes())
			err := SetStorageTarget(c, tt.target)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
			if string(c.Bytes()) != before {
				t.Error("a refused edit changed the file")
			}
		})
	}
}

func TestCheckStorageInterlock(t *testing.T) {
	tests := []struct {
		name, fixture, dir, wantErr string
	}{
		{"after setup", "storage-after-setup.conf", "/data/beegfs-storage", ""},
		{"shipped: first-run init on", "beegfs-storage.conf", "/data/beegfs-storage", "Do not set storeAllowFirstRunInit = true"},
		{"directory not listed", "storage-after-setup.conf", "/data3/beegfs-storage", "does not list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CheckStorageInterlock(parseFixture(t, tt.fixture), tt.dir)
			if tt.wantErr == "" {
				if err != nil || got.Directory != tt.dir {
					t.Fatalf("got %v, %v", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
	noKey := confFromText(t, "storeStorageDirectory = ,/a\nstoreFsUUID = ,"+uuidData+"\n")
	if _, err := CheckStorageInterlock(noKey, "/a"); err == nil {
		t.Error("a config without storeAllowFirstRunInit passed; BeeGFS defaults it to true")
	}
}

func TestMetaInterlock(t *testing.T) {
	c := parseFixture(t, "beegfs-meta.conf")
	got, err := CheckMetaInterlock(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := (StorageTarget{"/beegfs/meta", "9c1d2e3f-4a5b-4c6d-8e7f-0a1b2c3d4e5f"}); got != want {
		t.Errorf("got %v, want %v", got, want)
	}
	if err := SetMetaInterlock(c, StorageTarget{"/beegfs/meta", uuidNew}); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Get(KeyFsUUID); v != uuidNew {
		t.Errorf("storeFsUUID = %q, want the bare UUID", v)
	}

	tests := []struct{ name, text, wantErr string }{
		{"storage-style leading comma", "storeAllowFirstRunInit = false\nstoreMetaDirectory = /beegfs/meta\nstoreFsUUID = ," + uuidData + "\n",
			"The metadata config takes a single value with no comma"},
		{"first-run init on", "storeAllowFirstRunInit = true\nstoreMetaDirectory = /beegfs/meta\nstoreFsUUID = " + uuidData + "\n",
			"Do not set storeAllowFirstRunInit = true"},
		{"UUID not as blkid prints it", "storeAllowFirstRunInit = false\nstoreMetaDirectory = /beegfs/meta\nstoreFsUUID = not-a-uuid\n", "not a filesystem UUID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := CheckMetaInterlock(confFromText(t, tt.text))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
	err = SetMetaInterlock(parseFixture(t, "beegfs-meta.conf"), StorageTarget{"/other/meta", uuidNew})
	if err == nil || !strings.Contains(err.Error(), "refusing to switch") {
		t.Errorf("switching the metadata directory: err = %v", err)
	}
}

func TestCheckMountedUUID(t *testing.T) {
	target := StorageTarget{"/data/beegfs-storage", uuidData}
	tests := []struct {
		name, mounted, wantErr string
	}{
		{"same filesystem", uuidData, ""},
		{"case differs only", strings.ToUpper(uuidData), "in letter case only"},
		{"array did not assemble: root filesystem", uuidNew, "That is the interlock working"},
		{"no UUID reported", "", "reports no filesystem UUID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckMountedUUID(target, "/data", tt.mounted)
			wantErr(t, err, tt.wantErr)
		})
	}
}

func TestCheckSeparateFilesystem(t *testing.T) {
	tests := []struct {
		dir, mountpoint, wantErr string
	}{
		{"/data/beegfs-storage", "/data", ""},
		{"/data", "/data", ""},
		{"/data/beegfs-storage", "/", "is on the root filesystem"},
		{"/data/beegfs-storage", "/dat", "not below"},
	}
	for _, tt := range tests {
		err := CheckSeparateFilesystem(tt.dir, tt.mountpoint)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("CheckSeparateFilesystem(%s, %s) = %v, want %q", tt.dir, tt.mountpoint, err, tt.wantErr)
		}
	}
}
