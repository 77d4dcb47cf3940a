package slurm

import (
	"context"
	"errors"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport/transporttest"
)

func TestReadConfServer(t *testing.T) {
	for _, tc := range []struct {
		name, content, want string
		exists, found       bool
	}{
		{name: "missing file"},
		{name: "configless slurmd", content: "SLURMD_OPTIONS=\"--conf-server login01:6817\"\n", exists: true, want: "login01", found: true},
		{name: "no conf server (DNS SRV or local slurm.conf)", content: "SLURMD_OPTIONS=\"\"\n", exists: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := &transporttest.Files{Content: map[string][]byte{}}
			if tc.exists {
				files.Content[SlurmdDefaultsPath] = []byte(tc.content)
			}
			got, found, err := ReadConfServer(context.Background(), files)
			if err != nil || got != tc.want || found != tc.found {
				t.Errorf("ReadConfServer = %q, %v, %v; want %q, %v, nil", got, found, err, tc.want, tc.found)
			}
		})
	}
	broken := errors.New("connection lost")
	if _, _, err := ReadConfServer(context.Background(), &transporttest.Files{Err: broken}); !errors.Is(err, broken) {
		t.Errorf("a failed read gave %v, want %v", err, broken)
	}
}

func TestWriteSlurmdDefaults(t *testing.T) {
	content, err := SlurmdDefaults("login01", 6817)
	if err != nil {
		t.Fatal(err)
	}
	files := &transporttest.Files{}
	for i, want := range []bool{true, false} {
		changed, err := WriteSlurmdDefaults(context.Background(), files, content)
		if err != nil || changed != want {
			t.Errorf("write %d: changed %v, err %v; want %v, nil", i+1, changed, err, want)
		}
	}
	f := files.Written[0]
	if f.Path != SlurmdDefaultsPath || f.Owner != "root" || f.Mode != 0o644 || string(f.Content) != string(content) {
		t.Errorf("wrote %+v", f)
	}
}
