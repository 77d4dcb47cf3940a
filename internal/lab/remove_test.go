package lab

import (
	"context"
	"io"
	"reflect"
	"strings"
	"testing"
)

// Refusals come before anything is stopped or written, so the lab in these
// tests is only a descriptor with hosts that have no processes.
func TestAddAndRemoveRefuse(t *testing.T) {
	loaded := func() *Lab {
		return &Lab{descriptor: "/nonexistent/lab.json", Hosts: []Host{
			{Name: "login01", Address: "10.0.0.10", Role: RoleLogin},
			{Name: "gpu01", Address: "10.0.0.11", Role: RoleGPU},
		}}
	}
	notLoaded := func() *Lab { l := loaded(); l.descriptor = ""; return l }
	tests := []struct {
		name    string
		lab     func() *Lab
		op      func(*Lab) error
		wantErr string
	}{
		{"remove login01", loaded, remove("login01"), "refusing to remove login01"},
		{"remove unknown host", loaded, remove("gpu09"), `lab has no host "gpu09"`},
		{"remove without descriptor", notLoaded, remove("gpu01"), "not loaded from a descriptor"},
		{"add existing host", loaded, add("gpu01"), "lab already has gpu01"},
		{"add login01", loaded, add("login01"), "lab already has login01"},
		{"add bad name", loaded, add("gpu01;rm"), "invalid lab host name"},
		{"add without descriptor", notLoaded, add("gpu02"), "not loaded from a descriptor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := tt.lab()
			before := append([]Host(nil), l.Hosts...)
			err := tt.op(l)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tt.wantErr)
			}
			if !reflect.DeepEqual(l.Hosts, before) {
				t.Errorf("hosts changed on refusal: %+v, want %+v", l.Hosts, before)
			}
		})
	}
}

func remove(name string) func(*Lab) error {
	return func(l *Lab) error { return l.Remove(context.Background(), name, io.Discard) }
}

func add(name string) func(*Lab) error {
	return func(l *Lab) error {
		_, err := l.Add(context.Background(), name, io.Discard)
		return err
	}
}
