package slurm

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// AccountingFile is the fragment of gpucluster_slurm_accounting: the slurm.conf lines that
// point slurmctld at slurmdbd. It is written only once slurmdbd answers, so the activation
// that assembles it into slurm.conf finds the database ready (the guide's order: database,
// slurmdbd, then slurmctld with the accounting storage, then the TRES list).
const AccountingFile = "accounting.conf"

const kindAccounting = "accounting"

// AccountingSettings are slurm.conf's accounting lines. AccountingStorageType is always
// accounting_storage/slurmdbd: that is what the fragment is for.
type AccountingSettings struct {
	// StorageHost is AccountingStorageHost, the node slurmdbd runs on.
	StorageHost string
	// StoragePort is AccountingStoragePort; zero leaves Slurm's default, 6819.
	StoragePort int
	// TRES is AccountingStorageTRES, for example "gres/gpu"; empty keeps Slurm's default list.
	TRES []string
	// Enforce is AccountingStorageEnforce, for example associations,limits,qos.
	Enforce []string
}

// accountingKeys are the slurm.conf settings the accounting fragment owns: the controller's
// extra cannot set them too, or slurm.conf would hold each twice.
var accountingKeys = []string{
	"AccountingStorageType", "AccountingStorageHost", "AccountingStoragePort", "AccountingStorageTRES", "AccountingStorageEnforce",
}

func (a *AccountingSettings) fields() []field {
	return []field{
		{key: "AccountingStorageHost", str: &a.StorageHost}, {key: "AccountingStoragePort", num: &a.StoragePort},
		{key: "AccountingStorageTRES", list: &a.TRES}, {key: "AccountingStorageEnforce", list: &a.Enforce},
	}
}

// settings are the lines the fragment adds to slurm.conf.
func (a AccountingSettings) settings() []setting {
	return []setting{
		{"AccountingStorageType", slurmdbdAccounting}, {"AccountingStorageHost", a.StorageHost},
		{"AccountingStoragePort", itoa(int64(a.StoragePort))}, {"AccountingStorageTRES", strings.Join(a.TRES, ",")},
		{"AccountingStorageEnforce", strings.Join(a.Enforce, ",")},
	}
}

// Validate checks that each value fits a slurm.conf line and names a host.
func (a AccountingSettings) Validate() error {
	if !NamePattern.MatchString(a.StorageHost) {
		return &FieldError{Field: "AccountingStorageHost", Err: fmt.Errorf("accounting: storage host %q: use letters, digits, '.', '_' and '-'", a.StorageHost)}
	}
	if a.StoragePort < 0 || a.StoragePort > 65535 {
		return &FieldError{Field: "AccountingStoragePort", Err: fmt.Errorf("accounting: port %d is not a TCP port", a.StoragePort)}
	}
	for _, list := range [][]string{a.TRES, a.Enforce} {
		for _, v := range list {
			if v == "" || strings.Contains(v, ",") {
				return &FieldError{Field: "AccountingStorage", Err: fmt.Errorf("accounting: %q is not a list entry", v)}
			}
		}
	}
	return checkSettings("accounting", "", a.settings())
}

// AccountingFragment is gpucluster_slurm_accounting's fragment.
func AccountingFragment(a AccountingSettings) (Fragment, error) {
	if err := a.Validate(); err != nil {
		return Fragment{}, err
	}
	return Fragment{File: AccountingFile, Content: encodeFragment(kindAccounting, "gpucluster_slurm_accounting", a.fields(), nil)}, nil
}

// ParseAccountingFragment reads the accounting fragment back.
func ParseAccountingFragment(content []byte) (AccountingSettings, error) {
	var a AccountingSettings
	if err := decodeFragment(content, kindAccounting, a.fields(), nil); err != nil {
		return AccountingSettings{}, err
	}
	return a, a.Validate()
}

// TRESNamePattern matches a TRES name: cpu, mem, node, gres/gpu, gres/gpu:a100, license/x.
var TRESNamePattern = regexp.MustCompile(`^[a-z]+(/[A-Za-z0-9_.:-]+)?$`)

// effectiveController is the controller's settings as slurm.conf gets them: the accounting
// fragment's lines join the extra settings. A key set to different values there and in the
// controller's extra is refused, since only one of the two could be meant.
func effectiveController(f Fragments) (ControllerSettings, error) {
	c := *f.Controller
	if f.Accounting == nil {
		return c, nil
	}
	extra := make(map[string]string, len(c.Extra)+len(accountingKeys))
	for k, v := range c.Extra {
		extra[k] = v
	}
	for _, s := range f.Accounting.settings() {
		if s.value == "" {
			continue
		}
		if v, taken := lookup(c.Extra, s.key); taken {
			if v == s.value {
				// The same line from both, as while a setting moves from one to the other.
				continue
			}
			return ControllerSettings{}, fmt.Errorf("%s is set both in gpucluster_slurm_controller's extra (%s) and by gpucluster_slurm_accounting (%s): "+
				"remove it from the controller's extra, the accounting resource owns it", s.key, v, s.value)
		}
		extra[s.key] = s.value
	}
	c.Extra = extra
	return c, nil
}

// AccountingRequiredError is pitfall P2: gres or license TRES in AccountingStorageTRES while
// neither the accounting fragment nor the controller's own settings configure slurmdbd.
type AccountingRequiredError struct{ TRES string }

func (e *AccountingRequiredError) Error() string {
	return fmt.Sprintf("AccountingStorageTRES=%s needs AccountingStorageType=%s, which is not set: no gpucluster_slurm_accounting has written %s/%s "+
		"on the controller, and the controller's extra does not set it either. Set the TRES list as gpucluster_slurm_accounting's tres instead, "+
		"which writes it only once slurmdbd answers. %s", e.TRES, slurmdbdAccounting, FragmentDir, AccountingFile, guideP2)
}

// IsAccountingRequired reports whether err is pitfall P2's refusal.
func IsAccountingRequired(err error) bool {
	var e *AccountingRequiredError
	return errors.As(err, &e)
}
