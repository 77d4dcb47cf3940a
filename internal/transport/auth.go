package transport

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// authSigners collects the signers for one handshake: the configured private
// key first, then the agent's. They form a single publickey method because
// x/crypto tries each method name only once. The returned close releases
// the agent socket after the handshake.
func authSigners(cfg Config) (signers []ssh.Signer, closeAgent func(), err error) {
	closeAgent = func() {}
	if len(cfg.PrivateKey) > 0 {
		signer, err := parsePrivateKey(cfg.PrivateKey, cfg.PrivateKeyPassphrase)
		if err != nil {
			return nil, closeAgent, fmt.Errorf("private key for %s: %w", cfg.Name, err)
		}
		signers = append(signers, signer)
	}
	var agentErr error
	if cfg.UseAgent {
		var agentSigners []ssh.Signer
		agentSigners, closeAgent, agentErr = agentSignersFromEnv()
		signers = append(signers, agentSigners...)
	}
	if len(signers) == 0 {
		if agentErr != nil {
			return nil, closeAgent, fmt.Errorf("no SSH credentials for %s: %w", cfg.Name, agentErr)
		}
		return nil, closeAgent, fmt.Errorf("no SSH credentials for %s: configure a private key or an ssh-agent holding a key", cfg.Name)
	}
	return signers, closeAgent, nil
}

func parsePrivateKey(pem, passphrase []byte) (ssh.Signer, error) {
	signer, err := ssh.ParsePrivateKey(pem)
	var missing *ssh.PassphraseMissingError
	if !errors.As(err, &missing) {
		return signer, err
	}
	if len(passphrase) == 0 {
		return nil, errors.New("the key is encrypted and no passphrase is configured")
	}
	signer, err = ssh.ParsePrivateKeyWithPassphrase(pem, passphrase)
	if err != nil {
		return nil, fmt.Errorf("decrypt with the configured passphrase: %w", err)
	}
	return signer, nil
}

func agentSignersFromEnv() ([]ssh.Signer, func(), error) {
	noop := func() {}
	sock := os.Getenv("SSH_AUTH_SOCK")
	if sock == "" {
		return nil, noop, errors.New("ssh-agent requested but SSH_AUTH_SOCK is not set")
	}
	conn, err := net.Dial("unix", sock) //nolint:gosec // SSH_AUTH_SOCK names the agent by design

	if err != nil {
		return nil, noop, fmt.Errorf("connect to ssh-agent: %w", err)
	}
	closeConn := func() { _ = conn.Close() }
	signers, err := agent.NewClient(conn).Signers()
	if err != nil {
		closeConn()
		return nil, noop, fmt.Errorf("list ssh-agent keys: %w", err)
	}
	if len(signers) == 0 {
		closeConn()
		return nil, noop, errors.New("ssh-agent holds no keys")
	}
	return signers, closeConn, nil
}
