package main

import "testing"

func TestSpread(t *testing.T) {
	for _, c := range []struct {
		in          []int64
		lo, med, hi int64
	}{
		{[]int64{5}, 5, 5, 5},
		{[]int64{9, 1, 5}, 1, 5, 9},
		{[]int64{4, 1, 3, 2}, 1, 2, 4}, // (2+3)/2 in whole microseconds
		{[]int64{10, 20}, 10, 15, 20},
	} {
		lo, med, hi := spread(c.in)
		if lo != c.lo || med != c.med || hi != c.hi {
			t.Errorf("spread(%v) = %d, %d, %d; want %d, %d, %d", c.in, lo, med, hi, c.lo, c.med, c.hi)
		}
	}
}
