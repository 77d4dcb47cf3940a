package transport_test

import (
	"context"
	"testing"
	"time"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// BenchmarkLabSudo prices one sudo round trip on gpu01, reached through login01, over the
// pooled connection against dialling both hops anew for every command, which is what a
// provider without a pool pays per operation, and what a run pays once per host: the SSH
// login, sudo's password check and the root shell's start. host-cpu-ms/op is what each costs
// gpu01 itself (its container's cgroup), the part that no arrangement of the provider's reads
// can save.
func BenchmarkLabSudo(b *testing.B) {
	l := lab.Require(b)
	cfg := labConfig(b, l, "gpu01")
	ctx := context.Background()

	b.Run("pooled", func(b *testing.B) {
		defer reportHostCPU(b, l.Host("gpu01"))()
		pool := transport.NewPool()
		defer pool.Close()
		h, err := pool.Host(ctx, cfg)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := h.Sudo(ctx, "true", nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("dial-each-time", func(b *testing.B) {
		defer reportHostCPU(b, l.Host("gpu01"))()
		for b.Loop() {
			pool := transport.NewPool()
			h, err := pool.Host(ctx, cfg)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := h.Sudo(ctx, "true", nil); err != nil {
				b.Fatal(err)
			}
			pool.Close()
		}
	})
}

// reportHostCPU returns the function that reports, as host-cpu-ms/op, the CPU host has used
// since reportHostCPU was called.
func reportHostCPU(b *testing.B, host lab.Host) func() {
	b.Helper()
	before, err := host.CPUTime()
	if err != nil {
		b.Fatal(err)
	}
	return func() {
		after, err := host.CPUTime()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(after-before)/float64(time.Millisecond)/float64(b.N), "host-cpu-ms/op")
	}
}
