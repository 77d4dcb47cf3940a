package beegfs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// ControllerHost is what setting up the management service needs of its node.
type ControllerHost interface {
	transport.Executor
	transport.FileWriter
	transport.FileReader
}

// SetUpMgmtd writes the management service's config, initialises its store once, creates the
// shared files (conn.auth, and the TLS key and certificate where the release needs them) and
// the drop-in. restart reports a change the running service must be restarted for.
func SetUpMgmtd(ctx context.Context, h ControllerHost, mh MgmtdHost, rel Release, dbFile string, names TLSNames) (restart bool, err error) {
	cfg := mh.Config(rel)
	if !cfg.Exists {
		return false, fmt.Errorf("%s does not exist; reinstall %s, which ships it", rel.Layout().MgmtdConfigPath, MgmtdPackage)
	}
	content, err := SetMgmtdStore(rel, cfg.Content, dbFile)
	if err != nil {
		return false, err
	}
	if string(content) != string(cfg.Content) {
		if _, err := h.WriteFile(ctx, transport.File{Path: rel.Layout().MgmtdConfigPath, Content: content, Owner: "root", Group: "root", Mode: 0o644, ExpectSHA256: cfg.SHA256()}); err != nil {
			return false, err
		}
		restart = true
	}
	if !mh.Initialised(rel) {
		if err := initMgmtdOnce(ctx, h, rel, dbFile); err != nil {
			return false, err
		}
	}
	created, err := EnsureConnAuth(ctx, h)
	if err != nil {
		return false, err
	}
	if loose := mh.LooseSecrets(); len(loose) > 0 {
		if err := RestrictToRoot(ctx, h, loose...); err != nil {
			return false, err
		}
	}
	restart = restart || created
	if rel.Layout().NeedsTLSCert {
		changed, err := ensureTLS(ctx, h, mh, names)
		if err != nil {
			return false, err
		}
		restart = restart || changed
	}
	_, err = WriteMgmtdDropIn(ctx, h, h, mh)
	return restart, err
}

// initMgmtdOnce runs the one-time initialisation. A refusal because the store exists is accepted
// only once a fresh read finds it: someone initialised it since the read before.
func initMgmtdOnce(ctx context.Context, h transport.Executor, rel Release, dbFile string) error {
	outcome, err := InitMgmtd(ctx, h, rel, dbFile)
	if err != nil {
		return err
	}
	if outcome == Initialised {
		return nil
	}
	again, err := ReadMgmtd(ctx, h, dbFile)
	if err != nil {
		return err
	}
	if !again.Initialised(rel) {
		return fmt.Errorf("the initialisation reported an existing store, but %s is not there", dbFile)
	}
	return nil
}

// ensureTLS creates key.pem and cert.pem where missing. The key is generated in memory, written
// to the controller only if no key appeared there meanwhile, and cleared.
func ensureTLS(ctx context.Context, h ControllerHost, mh MgmtdHost, names TLSNames) (changed bool, err error) {
	if mh.KeySHA256 != "" && mh.CertSHA256 != "" {
		return false, nil
	}
	var key []byte
	if mh.KeySHA256 == "" {
		if key, err = GenerateTLSKey(); err != nil {
			return false, err
		}
		defer clear(key)
		if _, err := h.WriteFile(ctx, TLSKeyFile(key)); err != nil {
			return false, err
		}
	} else {
		if key, err = readExistingTLSKey(ctx, h); err != nil {
			return false, err
		}
		defer clear(key)
	}
	cert, err := SelfSignedCert(key, names, time.Now())
	if err != nil {
		return false, err
	}
	expect := transport.Absent
	if mh.CertSHA256 != "" {
		expect = mh.CertSHA256
	}
	_, err = h.WriteFile(ctx, transport.File{Path: TLSCertPath, Content: cert, Owner: "root", Group: "root", Mode: 0o644, ExpectSHA256: expect})
	return true, err
}

// readExistingTLSKey reads the key.pem the controller was seen to hold, for a new certificate.
func readExistingTLSKey(ctx context.Context, h transport.FileReader) ([]byte, error) {
	key, exists, err := h.ReadFile(ctx, TLSKeyPath)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", TLSKeyPath, err)
	}
	if !exists {
		return nil, fmt.Errorf("%s was removed while the provider worked on the controller; apply again, and the provider makes a new key and certificate", TLSKeyPath)
	}
	return key, nil
}

// StartMgmtd starts the management service, or restarts it when it runs and restart is set.
func StartMgmtd(ctx context.Context, h transport.Executor, restart bool) error {
	s, err := ReadService(ctx, h, ServiceMgmtd)
	if err != nil {
		return err
	}
	if restart && s.Running() {
		return Restart(ctx, h, ServiceMgmtd)
	}
	return EnableNow(ctx, h, ServiceMgmtd)
}

// ReadSharedFiles reads conn.auth, and cert.pem where the release needs it, from the
// controller into memory, for copying to the other nodes.
func ReadSharedFiles(ctx context.Context, ctl transport.FileReader, rel Release) (connAuth, cert []byte, err error) {
	connAuth, exists, err := ctl.ReadFile(ctx, ConnAuthPath)
	if err == nil && !exists {
		err = errors.New(ConnAuthPath + " disappeared while the apply read it")
	}
	if err != nil || !rel.Layout().NeedsTLSCert {
		return connAuth, nil, err
	}
	cert, exists, err = ctl.ReadFile(ctx, TLSCertPath)
	if err == nil && !exists {
		err = errors.New(TLSCertPath + " disappeared while the apply read it")
	}
	return connAuth, cert, err
}
