package redisstate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/redis/go-redis/v9"
)

// Live lets the subscriptions' poll loops of every replica act as one
// (live.Replicas): a lease per loop, so one replica polls a key's resource
// for all of them, and a channel per loop on which the leader publishes
// what it read (sealed with the caller's key: see live) and any replica a
// nudge (a message sent through it). Names are given by live, from keyed
// hashes: they reveal neither a key nor an id.
type Live struct {
	s     *Store
	token string // this process's, in the leases it holds
}

// Live returns the replicas' side of the subscriptions' loops.
func (s *Store) Live() *Live {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return &Live{s: s, token: hex.EncodeToString(b)}
}

// leadScript takes the lease KEYS[1] for ARGV[1] (this process) for
// ARGV[2] ms, or renews it when ARGV[1] holds it; 1 when it does.
var leadScript = redis.NewScript(`
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
if redis.call('set', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return 1
end
return 0`)

// Lead takes or renews the lease on name for ttl, and reports whether this
// process holds it. With Redis away, every replica leads (polls for
// itself), as without Redis.
func (l *Live) Lead(name string, ttl time.Duration) bool {
	held := true
	_ = l.s.do(func(ctx context.Context) error {
		n, err := leadScript.Run(ctx, l.s.rdb, []string{prefix + "live:lease:" + name}, l.token, ttl.Milliseconds()).Int()
		if err == nil {
			held = n == 1
		}
		return err
	})
	return held
}

// Publish sends payload to the replicas following name.
func (l *Live) Publish(name string, payload []byte) {
	_ = l.s.do(func(ctx context.Context) error {
		return l.s.rdb.Publish(ctx, prefix+"live:"+name, payload).Err()
	})
}

// Follow delivers what is published on name until stop is called. The
// subscription is its own connection, outside the round trips' timeout and
// breaker: without Redis it delivers nothing, and the loop polls for
// itself when the lease is not held by another.
func (l *Live) Follow(name string) (msgs <-chan []byte, stop func()) {
	ps := l.s.rdb.Subscribe(context.Background(), prefix+"live:"+name)
	out := make(chan []byte, 4)
	done := make(chan struct{})
	go func() {
		defer close(out)
		for {
			select {
			case m, ok := <-ps.Channel():
				if !ok {
					return
				}
				select {
				case out <- []byte(m.Payload):
				default: // a loop busy polling skips a state; the next one carries it
				}
			case <-done:
				return
			}
		}
	}()
	return out, func() {
		close(done)
		_ = ps.Close()
	}
}
