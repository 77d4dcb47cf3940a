package beegfs

import (
	"testing"
)

func TestParseRelease(t *testing.T) {
	tests := []struct {
		out       string
		wantMajor int
		wantVer   string
		wantErr   bool
	}{
		{"8.4.0", 8, "8.4.0", false},
		{"8.4.0\n", 8, "8.4.0", false},
		{"7.4.6-1", 7, "7.4.6", false},
		{"1:8.1.0~rc1", 8, "8.1.0", false},
		{"beegfs-mgmtd 8.4.0", 8, "8.4.0", false},
		{"7.3", 7, "7.3.0", false},
		{"6.19", 0, "", true},
		{"9.0.0", 0, "", true},
		{"", 0, "", true},
		{"dpkg-query: no packages found matching beegfs-storage", 0, "", true},
		{"2015.03.r27", 0, "", true},
	}
	for _, tt := range tests {
		r, err := ParseRelease(tt.out)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseRelease(%q) error = %v, want error %v", tt.out, err, tt.wantErr)
			continue
		}
		if err == nil && (r.Major != tt.wantMajor || r.Version.String() != tt.wantVer) {
			t.Errorf("ParseRelease(%q) = %d %s, want %d %s", tt.out, r.Major, r.Version, tt.wantMajor, tt.wantVer)
		}
	}
}

func TestLayout(t *testing.T) {
	tests := []struct {
		version string
		want    Layout
	}{
		{"7.4.6", Layout{MgmtdConfigPath: "/etc/beegfs/beegfs-mgmtd.conf", MgmtdConfigKind: KeyValue,
			MgmtdStoreKey: "storeMgmtdDirectory", MgmtdAuthKey: "connAuthFile", ServerAuthKey: "connAuthFile"}},
		{"8.4.0", Layout{MgmtdConfigPath: "/etc/beegfs/beegfs-mgmtd.toml", MgmtdConfigKind: TOML,
			MgmtdStoreKey: "db-file", MgmtdAuthKey: "auth-file", ServerAuthKey: "connAuthFile", NeedsTLSCert: true}},
	}
	for _, tt := range tests {
		r, err := ParseRelease(tt.version)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Layout(); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.version, got, tt.want)
		}
	}
}
