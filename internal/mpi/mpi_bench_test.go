//go:build mpi

package mpi

import (
	"fmt"
	"os"
	"testing"
)

var world *Comm

// TestMain initialises MPI: run the test binary under mpirun, e.g.
//
//	go test -c -tags mpi -o mpi.test ./internal/mpi
//	mpirun -np 2 ./mpi.test -test.run '^$' -test.bench . -test.benchtime 200x
//
// (a fixed -test.benchtime, so that every rank runs the same iterations).
func TestMain(m *testing.M) {
	c, err := Init()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	world = c
	code := m.Run()
	if err := c.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// TestAllgather checks that every rank receives every rank's values in
// rank order, with unequal counts.
func TestAllgather(t *testing.T) {
	n := world.Size()
	counts := make([]int, n)
	total := 0
	for r := range counts {
		counts[r] = r + 2
		total += r + 2
	}
	send := make([]float64, counts[world.Rank()])
	for i := range send {
		send[i] = float64(world.Rank()*100 + i)
	}
	recv := make([]float64, total)
	if err := world.Allgather(send, counts, recv); err != nil {
		t.Fatal(err)
	}
	k := 0
	for r, c := range counts {
		for i := range c {
			if recv[k] != float64(r*100+i) {
				t.Fatalf("rank %d: value %d from rank %d is %v", world.Rank(), i, r, recv[k])
			}
			k++
		}
	}
	if err := world.Allgather(send, counts[:n-1], recv); n > 1 && err == nil {
		t.Error("Allgather with too few counts succeeded")
	}
}

// BenchmarkAllgather measures the exchange of one training step of the
// quadruped preset over MPI: every process sends one sum of 316,008
// gradient values, a loss and a weight (the tree node its shards form
// when the processes are a power of two dividing the 16 shards of batch
// 2048) and receives every other's.
func BenchmarkAllgather(b *testing.B) {
	const width = 316008 + 2
	n := world.Size()
	counts := make([]int, n)
	for r := range counts {
		counts[r] = width
	}
	send := make([]float64, width)
	recv := make([]float64, n*width)
	b.SetBytes(int64(8 * width))
	b.ReportAllocs()
	for b.Loop() {
		if err := world.Allgather(send, counts, recv); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n), "processes")
}
