//! What creates and deletes pods: a workload's replicas (the ReplicaSet controller) and Jobs (Kueue admission, then
//! the Job controller).

use std::cmp::Reverse;
use std::collections::BTreeMap;

use super::cluster;
use super::state::Owner;
use super::{Job, Run};

/// A pod's place in the ReplicaSet controller's deletion order (smallest first): placed, running, fewer of the
/// workload's pods on its node, started earlier, created earlier.
type DeletionRank = (bool, bool, Reverse<usize>, Reverse<u64>, Reverse<usize>);

impl Run<'_, '_> {
    /// A workload's desired replicas from now: new pods pending, or the ReplicaSet controller's deletions.
    pub(super) fn scale(&mut self, workload: &str, replicas: u32) {
        let Some(w) = self.workloads.iter().position(|(k, _)| k == workload) else { return };
        if self.workloads[w].1.is_none() {
            return;
        }
        let want = replicas as usize;
        while self.replicas[w].len() < want {
            let p = self.create_pod(Owner::Workload(w), 0);
            self.replicas[w].push(p);
        }
        if self.replicas[w].len() > want {
            let mut ranked = self.replicas[w].clone();
            ranked.sort_by_key(|&p| self.deletion_rank(w, p));
            for &p in &ranked[..ranked.len() - want] {
                self.delete_pod(p);
            }
            let kept: Vec<usize> = ranked[ranked.len() - want..].to_vec();
            self.replicas[w].retain(|p| kept.contains(p));
        }
    }

    /// kubernetes v1.33 `pkg/controller/replicaset/replica_set.go` `getPodsToDelete` over `controller_utils.go`
    /// `ActivePodsWithRanks`: unassigned before assigned, pending before running, then pods on nodes holding more of
    /// the workload's pods, then the newest (the pod that became ready last; here, that started last, then was
    /// created last).
    fn deletion_rank(&self, w: usize, p: usize) -> DeletionRank {
        let pod = &self.pods[p];
        let on_same_node = pod.node.map_or(0, |n| self.replicas[w].iter().filter(|&&q| self.pods[q].node == Some(n)).count());
        let started = pod.node.filter(|_| pod.running).map_or(0, |n| self.nodes[n].ready_at.max(pod.created_at));
        (pod.node.is_some(), pod.running, Reverse(on_same_node), Reverse(started), Reverse(p))
    }

    /// A Job submitted to its LocalQueue: Kueue decides when it is admitted.
    pub(super) fn submit_job(&mut self, name: &str, queue: &str, pods: u32, duration: u64, pod: &serde_json::Value) {
        let mut object = cluster::job_object(name, queue, pods, pod);
        // Kueue orders a queue's Workloads by creation: the run's clock as RFC 3339.
        let created = time::OffsetDateTime::from_unix_timestamp(self.trace.start_unix + self.now as i64).ok();
        let stamp = created.map(|t| format!("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", t.year(), u8::from(t.month()), t.day(), t.hour(), t.minute(), t.second()));
        if let (Some(meta), Some(stamp)) = (object.get_mut("metadata").and_then(|m| m.as_object_mut()), stamp) {
            meta.insert("creationTimestamp".into(), serde_json::Value::String(stamp));
        }
        let specs = cluster::specs(&object).unwrap_or_default();
        let key = format!("{queue}/{name}");
        self.jobs.push(Job { key, specs, admitted: None, started: None, duration, finished: false, pods: Vec::new(), arrived: self.now });
        self.admit_jobs();
    }

    /// Kueue's scheduler over the Jobs admitted (first, holding their quota) and waiting (in arrival order): the
    /// simulator's `admission` (BestEffortFIFO/StrictFIFO, flavors, borrowing); a newly admitted Job's pods are
    /// created with its flavor's nodeSelector and tolerations.
    fn admit_jobs(&mut self) {
        let mut order: Vec<usize> = (0..self.jobs.len()).filter(|&j| !self.jobs[j].finished && !self.jobs[j].specs.is_empty()).collect();
        order.sort_by_key(|&j| (self.jobs[j].admitted.is_none(), self.jobs[j].admitted.unwrap_or(0), self.jobs[j].arrived, j));
        if order.iter().all(|&j| self.jobs[j].admitted.is_some()) {
            return;
        }
        let mut index = BTreeMap::new();
        let mut pods = Vec::new();
        for &j in &order {
            for (i, s) in self.jobs[j].specs.iter().enumerate() {
                index.insert(s.pod.key.clone(), (j, i));
                pods.push(s.pod.clone());
            }
        }
        let outcome = crate::simulate::admission::admit(&self.cluster.kueue, &pods);
        let mut admitted: BTreeMap<usize, Vec<(usize, crate::simulate::pods::Pod)>> = BTreeMap::new();
        for pod in outcome.pods {
            if let Some(&(j, i)) = index.get(&pod.key).filter(|(j, _)| self.jobs[*j].admitted.is_none()) {
                admitted.entry(j).or_default().push((i, pod));
            }
        }
        for (j, pods) in admitted {
            self.jobs[j].admitted = Some(self.now);
            for (i, pod) in pods {
                self.jobs[j].specs[i].pod = pod;
                let p = self.create_pod(Owner::Job(j), i);
                self.jobs[j].pods.push(p);
            }
        }
    }

    /// Jobs whose run ends now: their pods go, their quota returns, and waiting Jobs may be admitted.
    pub(super) fn jobs_tick(&mut self) {
        let now = self.now;
        let ended: Vec<usize> = (0..self.jobs.len()).filter(|&j| !self.jobs[j].finished && self.jobs[j].started.is_some_and(|s| s + self.jobs[j].duration <= now)).collect();
        for &j in &ended {
            self.jobs[j].finished = true;
            for p in self.jobs[j].pods.clone() {
                self.delete_pod(p);
            }
        }
        if !ended.is_empty() {
            self.admit_jobs();
        }
    }

    /// A Job's clock starts when all its pods run.
    pub(super) fn job_pod_started(&mut self, j: usize) {
        let job = &self.jobs[j];
        if job.started.is_none() && job.pods.iter().all(|&p| self.pods[p].running) {
            self.jobs[j].started = Some(self.now);
        }
    }

    pub(super) fn jobs_next(&self) -> Option<u64> {
        self.jobs.iter().filter(|j| !j.finished).filter_map(|j| j.started.map(|s| s + j.duration)).filter(|t| *t > self.now).min()
    }
}
