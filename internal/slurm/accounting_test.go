package slurm

import (
	"reflect"
	"strings"
	"testing"
)

func TestAccountingFragmentRoundTrip(t *testing.T) {
	for _, a := range []AccountingSettings{
		{StorageHost: "login01"},
		{StorageHost: "db01", StoragePort: 7031, TRES: []string{"gres/gpu", "license/matlab"}, Enforce: []string{"associations", "limits", "qos"}},
	} {
		frag, err := AccountingFragment(a)
		if err != nil {
			t.Fatal(err)
		}
		if frag.File != AccountingFile {
			t.Errorf("file %q", frag.File)
		}
		got, err := ParseFragments(map[string][]byte{AccountingFile: frag.Content})
		if err != nil || got.Accounting == nil || !reflect.DeepEqual(*got.Accounting, a) {
			t.Errorf("round trip of %+v: got %+v, %v\n%s", a, got.Accounting, err, frag.Content)
		}
	}
	if _, err := AccountingFragment(AccountingSettings{StorageHost: "login01", TRES: []string{"gres/gpu x"}}); err == nil {
		t.Error("a TRES with a space was accepted")
	}
	if _, err := AccountingFragment(AccountingSettings{StorageHost: "bad host"}); err == nil {
		t.Error("a host with a space was accepted")
	}
}

func accountingFragments(t *testing.T, controllerExtra map[string]string, a *AccountingSettings) Fragments {
	t.Helper()
	c, nodes, parts := guideExample()
	c.Extra = controllerExtra
	return Fragments{Controller: &c, Nodes: nodes, Partitions: parts, Accounting: a}
}

func TestAssembleWithAccounting(t *testing.T) {
	f := accountingFragments(t, nil, &AccountingSettings{StorageHost: "login01", TRES: []string{"gres/gpu"}, Enforce: []string{"limits", "qos"}})
	conf, _, _, err := Assemble(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"AccountingStorageType=accounting_storage/slurmdbd", "AccountingStorageHost=login01",
		"AccountingStorageTRES=gres/gpu", "AccountingStorageEnforce=limits,qos"} {
		if !strings.Contains(string(conf), "\n"+line+"\n") {
			t.Errorf("slurm.conf lacks %s:\n%s", line, conf)
		}
	}
	if strings.Contains(string(conf), "AccountingStoragePort") {
		t.Errorf("an unset port was written:\n%s", conf)
	}
	dup := accountingFragments(t, map[string]string{"accountingstoragehost": "elsewhere"}, &AccountingSettings{StorageHost: "login01"})
	if _, _, _, err := Assemble(dup); err == nil || !strings.Contains(err.Error(), "set both") {
		t.Errorf("a key set twice: got %v", err)
	}
	same := accountingFragments(t, map[string]string{"AccountingStorageTRES": "gres/gpu"}, &AccountingSettings{StorageHost: "login01", TRES: []string{"gres/gpu"}})
	if conf, _, _, err := Assemble(same); err != nil || strings.Count(string(conf), "AccountingStorageTRES=") != 1 {
		t.Errorf("the same line from both: %v\n%s", err, conf)
	}
}

// P2 is precise: GPU TRES pass with the accounting fragment, from it or from the controller's
// extra, and are refused without it.
func TestCheckGPUAccountingWithFragment(t *testing.T) {
	gpuTRES := map[string]string{"AccountingStorageTRES": "gres/gpu"}
	tests := []struct {
		name    string
		f       Fragments
		refused bool
	}{
		{"extra TRES, no accounting", accountingFragments(t, gpuTRES, nil), true},
		{"extra TRES, accounting running", accountingFragments(t, gpuTRES, &AccountingSettings{StorageHost: "login01"}), false},
		{"TRES of the accounting", accountingFragments(t, nil, &AccountingSettings{StorageHost: "login01", TRES: []string{"gres/gpu"}}), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := checkBeforeWrite(state{}, tc.f)
			if got := IsAccountingRequired(err); got != tc.refused {
				t.Errorf("refused = %v (%v), want %v", got, err, tc.refused)
			}
			if tc.refused && !strings.Contains(err.Error(), "Do Not Enable GPU Accounting Yet") {
				t.Errorf("the refusal does not quote the guide: %v", err)
			}
		})
	}
}

func TestSlurmdbdConf(t *testing.T) {
	d := Slurmdbd{DbdHost: "login01", DbdPort: 6819, SlurmUser: "slurm", Database: "slurm_acct_db", DatabaseUser: "slurm"}
	conf := string(RenderSlurmdbdConf(d, []byte("Secret-Password-1")))
	for _, line := range []string{"DbdHost=login01", "StorageType=accounting_storage/mysql", "StorageHost=localhost", "StorageLoc=slurm_acct_db", "StoragePass=Secret-Password-1"} {
		if !strings.Contains(conf, "\n"+line+"\n") {
			t.Errorf("slurmdbd.conf lacks %s:\n%s", line, conf)
		}
	}
	if got := string(confWithoutPassword(d)); strings.Contains(got, "StoragePass") || got+"StoragePass=Secret-Password-1\n" != conf {
		t.Errorf("the conf without password is not the conf less its last line:\n%s", got)
	}
	for _, bad := range []string{"short", "has space in it", "quote'd-password", "back\\slash-password", "hash#password-1"} {
		err := ValidatePassword([]byte(bad))
		if err == nil {
			t.Errorf("password %q accepted", bad)
		} else if strings.Contains(err.Error(), bad) {
			t.Errorf("the error quotes the password: %v", err)
		}
	}
	if err := (Slurmdbd{DbdHost: "login01", DbdPort: 6819, SlurmUser: "slurm", Database: "x`; DROP", DatabaseUser: "slurm"}).Validate(); err == nil {
		t.Error("a database name with SQL in it was accepted")
	}
}
