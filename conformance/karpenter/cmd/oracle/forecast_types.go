package main

// The interchange with gpuplan's forecast stage, in its JSON schema: a Trace in (src/forecast/trace.rs), a Timeline
// out (src/forecast/timeline.rs). Both versions are checked; a field the oracle does not know is an error, as serde's
// deny_unknown_fields is on gpuplan's side.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"time"
)

const traceVersion = 1

type trace struct {
	Version        uint32                     `json:"version"`
	Cluster        string                     `json:"cluster"`
	Seed           uint64                     `json:"seed"`
	HorizonSeconds uint64                     `json:"horizon_seconds"`
	Workloads      map[string]json.RawMessage `json:"workloads"`
	StartupSeconds map[string]uint64          `json:"startup_seconds"`
	Events         []traceEvent               `json:"events"`
	// StartUnix is second 0 as a Unix time (trace.rs `start_unix`; absent: its default, Monday 2026-01-05 00:00 UTC):
	// budgets' cron schedules are read against it.
	StartUnix *int64 `json:"start_unix"`
}

// defaultStartUnix is trace.rs `START_UNIX`, the start of a trace that names none.
const defaultStartUnix = 1_767_571_200

// traceEvent is every variant of trace.rs's Event in one struct (serde's internally tagged enum, tag "kind").
type traceEvent struct {
	Kind string `json:"kind"`
	At   uint64 `json:"at"`
	// replicas
	Workload string `json:"workload,omitempty"`
	Replicas uint32 `json:"replicas,omitempty"`
	// job
	Name            string          `json:"name,omitempty"`
	Queue           string          `json:"queue,omitempty"`
	Pods            uint32          `json:"pods,omitempty"`
	DurationSeconds uint64          `json:"duration_seconds,omitempty"`
	Pod             json.RawMessage `json:"pod,omitempty"`
	// interruption, shortage
	InstanceType string  `json:"instance_type,omitempty"`
	Zone         string  `json:"zone,omitempty"`
	Share        float64 `json:"share,omitempty"`
	Until        uint64  `json:"until,omitempty"`
	CapacityType string  `json:"capacity_type,omitempty"`
	// drift
	NodePool string `json:"nodepool,omitempty"`
}

// defaultStartupSeconds is trace.rs DEFAULT_STARTUP_SECONDS.
const defaultStartupSeconds = 180

type timeline struct {
	HorizonSeconds    uint64            `json:"horizon_seconds"`
	Nodes             []nodeLife        `json:"nodes"`
	PendingPodSeconds map[string]uint64 `json:"pending_pod_seconds"`
	Decisions         []decision        `json:"decisions"`
}

type nodeLife struct {
	ID           string  `json:"id"`
	NodePool     string  `json:"nodepool"`
	InstanceType string  `json:"instance_type"`
	CapacityType string  `json:"capacity_type"`
	Zone         string  `json:"zone"`
	LaunchedAt   uint64  `json:"launched_at"`
	ReadyAt      *uint64 `json:"ready_at"`
	TerminatedAt *uint64 `json:"terminated_at"`
	EndedBy      *string `json:"ended_by"`
}

type decision struct {
	At           uint64   `json:"at"`
	Reason       string   `json:"reason"`
	Nodes        []string `json:"nodes"`
	Replacements []string `json:"replacements"`
}

// timeline.rs EndedBy, kebab-case.
const (
	endedEmpty         = "empty"
	endedUnderutilized = "underutilized"
	endedExpired       = "expired"
	endedDrifted       = "drifted"
	endedInterrupted   = "interrupted"
)

func readTrace(path string) (*trace, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	t := &trace{}
	if err := dec.Decode(t); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	start := int64(defaultStartUnix)
	if t.StartUnix != nil {
		start = *t.StartUnix
	}
	epoch = time.Unix(start, 0).UTC()
	if t.Version != traceVersion {
		return nil, fmt.Errorf("%s: trace version %d, this oracle reads version %d", path, t.Version, traceVersion)
	}
	for i := 1; i < len(t.Events); i++ {
		if t.Events[i].At < t.Events[i-1].At {
			return nil, fmt.Errorf("%s: events are not sorted by `at` (event %d)", path, i)
		}
	}
	return t, nil
}
