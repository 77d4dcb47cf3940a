package beegfs

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	_ "embed"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// The files the controller shares with every BeeGFS node: the secret conn.auth and, in 8.x,
// the management API's certificate with its key, which stays on the controller.

// Modes of the shared files: the secret readable by root alone, as the
// guide's chmod 400; the certificate is public.
const (
	connAuthMode fs.FileMode = 0o400
	tlsKeyMode   fs.FileMode = 0o400
	tlsCertMode  fs.FileMode = 0o644
)

// tlsValidity is long because nothing renews the certificate: every node
// holds a copy, and replacing it means copying it everywhere again.
const tlsValidity = 10 * 365 * 24 * time.Hour

// connAuthScript creates the secret only when it is missing: written to a
// temporary file first and linked into place, so a concurrent creator or an
// existing file is never overwritten, and a partial file is never seen.
//
//go:embed conn_auth.sh
var connAuthScript string

// EnsureConnAuth generates /etc/beegfs/conn.auth on the host as the guide
// does, only when it is missing. The secret never leaves the host here.
func EnsureConnAuth(ctx context.Context, ex transport.Executor) (created bool, err error) {
	res, err := ex.Sudo(ctx, transport.NewScript().Set("f", ConnAuthPath).Text(connAuthScript).String(), nil)
	if err != nil {
		return false, fmt.Errorf("generate %s: %w", ConnAuthPath, err)
	}
	switch out := string(trimNL(res.Stdout)); out {
	case "created":
		transport.Changed(ctx, ex, "generated "+ConnAuthPath)
		return true, nil
	case "exists":
		return false, nil
	default:
		return false, fmt.Errorf("generate %s: unexpected output %q", ConnAuthPath, out)
	}
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// TLSNames are the names the management API's certificate is valid for:
// the node's name and address, as clients reach it by either.
type TLSNames struct {
	Node    string
	Address string
}

// GenerateTLSKey makes a new ECDSA P-256 key in PEM.
func GenerateTLSKey() ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate TLS key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode TLS key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// SelfSignedCert makes the management API's certificate for keyPEM, valid
// for names from now on. Errors never quote the key.
func SelfSignedCert(keyPEM []byte, names TLSNames, now time.Time) ([]byte, error) {
	block, _ := pem.Decode(keyPEM)
	if block == nil {
		return nil, errors.New(TLSKeyPath + " holds no PEM block")
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		if ec, ecErr := x509.ParseECPrivateKey(block.Bytes); ecErr == nil {
			parsed = ec
		} else {
			return nil, errors.New(TLSKeyPath + " is not a PKCS#8 or EC private key")
		}
	}
	key, ok := parsed.(*ecdsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s holds a %T key; the provider makes certificates for ECDSA keys only", TLSKeyPath, parsed)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("certificate serial: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: names.Node},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(tlsValidity),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	for _, n := range []string{names.Node, names.Address} {
		if n == "" {
			continue
		}
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if !slices.Contains(tmpl.DNSNames, n) {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("create certificate: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// TLSKeyFile is key.pem as written once on the controller: it must not exist
// yet, so a key made by someone else in between is never replaced.
func TLSKeyFile(keyPEM []byte) transport.File {
	return transport.File{Path: TLSKeyPath, Content: keyPEM, Owner: "root", Group: "root", Mode: tlsKeyMode, ExpectSHA256: transport.Absent}
}

// SharedFiles are the files every BeeGFS node gets from the controller,
// identical: the secret and, in 8.x, the management API's certificate.
func SharedFiles(connAuth, cert []byte) []transport.File {
	files := []transport.File{{Path: ConnAuthPath, Content: connAuth, Owner: "root", Group: "root", Mode: connAuthMode}}
	if cert != nil {
		files = append(files, transport.File{Path: TLSCertPath, Content: cert, Owner: "root", Group: "root", Mode: tlsCertMode})
	}
	return files
}

// WriteSharedFiles gives a node its copies of SharedFiles; identical copies are left alone.
func WriteSharedFiles(ctx context.Context, w transport.FileWriter, connAuth, cert []byte) error {
	for _, f := range SharedFiles(connAuth, cert) {
		if _, err := w.WriteFile(ctx, f); err != nil {
			return err
		}
	}
	return nil
}

// rootOnly is how stat shows a secret as the guide leaves it: root's, chmod 400.
const rootOnly = "root:root 400"

// secretPermProblems reports a secret that others than root may read or
// change; a missing file is reported elsewhere. Root's own write bit is no
// problem: openssl writes a key 0600, and only root can use it either way.
func secretPermProblems(file, perm string) []string {
	if perm == "" || rootAlone(perm) {
		return nil
	}
	return []string{fmt.Sprintf("%s is %s, want %s", file, perm, rootOnly)}
}

// rootAlone reads stat's "owner:group mode": owned by root, and no
// permission for the group or others.
func rootAlone(perm string) bool {
	owner, mode, ok := strings.Cut(perm, " ")
	user, _, _ := strings.Cut(owner, ":")
	bits, err := strconv.ParseUint(mode, 8, 32)
	return ok && err == nil && user == "root" && bits&0o077 == 0
}

// LooseSecrets are the controller's secrets that others than root may read
// or change.
func (m MgmtdHost) LooseSecrets() []string {
	var loose []string
	if len(secretPermProblems(ConnAuthPath, m.ConnAuthPerm)) > 0 {
		loose = append(loose, ConnAuthPath)
	}
	if len(secretPermProblems(TLSKeyPath, m.KeyPerm)) > 0 {
		loose = append(loose, TLSKeyPath)
	}
	return loose
}

// SharedCopy is what a node holds of the shared files: fingerprints only,
// and the secret's owner and mode.
type SharedCopy struct {
	ConnAuthSHA256 string
	ConnAuthPerm   string
	CertSHA256     string
}

// ReadSharedCopy reads a node's copies in one round trip.
func ReadSharedCopy(ctx context.Context, ex transport.Executor) (SharedCopy, error) {
	st, err := ReadHost(ctx, ex, HostQuery{Fingerprints: []string{ConnAuthPath, TLSCertPath}})
	if err != nil {
		return SharedCopy{}, err
	}
	return SharedCopy{
		ConnAuthSHA256: st.Fingerprints[ConnAuthPath],
		ConnAuthPerm:   st.Permissions[ConnAuthPath],
		CertSHA256:     st.Fingerprints[TLSCertPath],
	}, nil
}

// CopyProblems compares a node's copies with the controller's by
// fingerprint, and checks that its secret is root's alone. wantCert is ""
// when the release has no certificate.
func CopyProblems(node, wantAuth, wantCert string, got SharedCopy) []string {
	var problems []string
	for _, f := range []struct{ file, want, got string }{
		{ConnAuthPath, wantAuth, got.ConnAuthSHA256},
		{TLSCertPath, wantCert, got.CertSHA256},
	} {
		switch {
		case f.want == "":
		case f.got == "":
			problems = append(problems, f.file+" missing on "+node)
		case f.got != f.want:
			problems = append(problems, "different "+f.file+" on "+node)
		}
	}
	for _, p := range secretPermProblems(ConnAuthPath, got.ConnAuthPerm) {
		problems = append(problems, p+" on "+node)
	}
	return problems
}

// RestrictToRoot gives secret files back to root alone (chmod 400), as
// generated; an existing secret is never rewritten just to fix its mode.
func RestrictToRoot(ctx context.Context, ex transport.Executor, files ...string) error {
	var b strings.Builder
	b.WriteString(transport.ScriptEnv + "set -e\n")
	for _, f := range files {
		if err := ValidatePath(f); err != nil {
			return err
		}
		fmt.Fprintf(&b, "chown root:root -- %[1]s && chmod 0400 -- %[1]s\n", transport.Quote(f))
	}
	if _, err := ex.Sudo(ctx, b.String(), nil); err != nil {
		return fmt.Errorf("restrict %s to root: %w", strings.Join(files, ", "), err)
	}
	return nil
}
