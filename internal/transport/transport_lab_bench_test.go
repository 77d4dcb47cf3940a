package transport_test

import (
	"context"
	"testing"

	"github.com/gpucluster/terraform-provider-gpucluster/internal/lab"
	"github.com/gpucluster/terraform-provider-gpucluster/internal/transport"
)

// BenchmarkLabSudo prices one sudo round trip on gpu01, reached through login01, over the
// pooled connection against dialling both hops anew for every command, which is what a
// provider without a pool pays per operation.
func BenchmarkLabSudo(b *testing.B) {
	l := lab.Require(b)
	cfg := labConfig(b, l, "gpu01")
	ctx := context.Background()

	b.Run("pooled", func(b *testing.B) {
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
