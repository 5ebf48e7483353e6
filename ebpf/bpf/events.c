// SPDX-License-Identifier: GPL-2.0
/* events.c: podline's kernel edge. Three tracepoints report, for the
 * containers podline watches, the moments the pod lifecycle waits on: the
 * main process exiting (with its wait status), the OOM killer choosing a
 * victim, and a cgroup becoming empty. Everything goes through one ring
 * buffer; filtering by the `watched` cgroup ids happens here so that the
 * thousands of unrelated exits a busy node has never wake podline. */
#include "helpers.h"

/* Keep in sync with Kind in ../events.go. */
enum event_kind {
	EVENT_EXIT = 1,
	EVENT_OOM_VICTIM = 2,
	EVENT_EMPTIED = 3,
};

struct event {
	u64 cgroup_id;   /* kernfs id of the cgroup2 directory (its inode number) */
	u64 boot_ns;     /* CLOCK_BOOTTIME of the kernel event */
	u32 pid;         /* host ids; 0 for EVENT_EMPTIED */
	u32 tgid;
	s32 wait_status; /* code << 8 | signal, as wait(2) reports it; EVENT_EXIT only */
	u8 kind;         /* enum event_kind */
	u8 _pad[3];
};

/* Puts struct event into the object's BTF, where bpf2go -type finds it; the
 * programs only use it through a ring buffer pointer, which BTF omits. It
 * lives in .rodata next to watched_hierarchy, so it costs no map of its own. */
const struct event *const event_layout = 0;

/* cgroup2 ids podline registered. A node runs thousands of pods with a few
 * containers each; not preallocated so an idle node pays only for what it
 * watches. The value is unused. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, u64);
	__type(value, u8);
} watched SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} events SEC(".maps");

/* Events lost because the ring buffer was full; per CPU so the count needs
 * no atomics. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u64);
} dropped SEC(".maps");

/* The hierarchy whose kernfs ids `watched` holds. Ids are unique only within
 * one hierarchy, and on a hybrid host cgroup v1 hierarchies reuse the numbers
 * cgroup2 hands out. 0 is the default (cgroup2) hierarchy, as the "0::" line
 * of /proc/self/cgroup shows; a constant so tests can point it at a v1
 * hierarchy to prove the check filters. */
volatile const int watched_hierarchy = 0;

static __always_inline void emit(u8 kind, u64 cgroup_id, u32 pid, u32 tgid, s32 wait_status)
{
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		u32 zero = 0;
		u64 *n = bpf_map_lookup_elem(&dropped, &zero);
		if (n)
			(*n)++;
		return;
	}
	e->cgroup_id = cgroup_id;
	e->boot_ns = bpf_ktime_get_boot_ns();
	e->pid = pid;
	e->tgid = tgid;
	e->wait_status = wait_status;
	e->kind = kind;
	e->_pad[0] = e->_pad[1] = e->_pad[2] = 0;
	bpf_ringbuf_submit(e, 0);
}

/* pidns_init reports whether the thread group is pid 1 of its own pid
 * namespace: a container's main process. numbers[] is indexed by a runtime
 * value, which the verifier refuses on a BTF pointer, hence the probe read. */
static __always_inline bool pidns_init(struct task_struct *leader)
{
	struct pid *pid = leader->thread_pid;
	if (!pid)
		return false;
	unsigned int level = pid->level;
	int nr = 0;
	if (bpf_probe_read_kernel(&nr, sizeof(nr), &pid->numbers[level].nr))
		return false;
	return nr == 1;
}

/* sched_process_exit(struct task_struct *p, bool group_dead). Fires per
 * thread; group_dead marks the last one, which is when wait(2) on the
 * process can return, even if the leader thread left earlier. */
SEC("tp_btf/sched_process_exit")
int on_exit(u64 *ctx)
{
	struct task_struct *task = (void *)ctx[0];
	bool group_dead = ctx[1] & 0xff;
	if (!group_dead)
		return 0;

	u64 cgroup_id = bpf_get_current_cgroup_id();
	if (!bpf_map_lookup_elem(&watched, &cgroup_id))
		return 0;

	struct task_struct *leader = task->group_leader;
	if (!pidns_init(leader))
		return 0;

	/* The status wait(2) will report: the group exit code when the process
	 * was killed or called exit_group, else the leader's own. */
	struct signal_struct *sig = task->signal;
	s32 status = (sig->flags & SIGNAL_GROUP_EXIT) ? sig->group_exit_code : leader->exit_code;
	emit(EVENT_EXIT, cgroup_id, task->pid, task->tgid, status);
	return 0;
}

/* mark_victim(struct task_struct *task, uid_t uid). Every victim is
 * reported, watched or not: OOM kills are rare, and podline counts those
 * outside its pods as system OOMs. The cgroup is the victim's, not that of
 * the task that ran into the limit. */
SEC("tp_btf/mark_victim")
int on_oom_victim(u64 *ctx)
{
	struct task_struct *task = (void *)ctx[0];
	emit(EVENT_OOM_VICTIM, task->cgroups->dfl_cgrp->kn->id, task->pid, task->tgid, 0);
	return 0;
}

/* cgroup_notify_populated(struct cgroup *cgrp, const char *path, int val).
 * Fires for every hierarchy, v1 included; see watched_hierarchy. */
SEC("tp_btf/cgroup_notify_populated")
int on_populated(u64 *ctx)
{
	struct cgroup *cgrp = (void *)ctx[0];
	int populated = (int)ctx[2];
	if (populated)
		return 0;
	if (cgrp->root->hierarchy_id != watched_hierarchy)
		return 0;

	u64 cgroup_id = cgrp->kn->id;
	if (!bpf_map_lookup_elem(&watched, &cgroup_id))
		return 0;
	emit(EVENT_EMPTIED, cgroup_id, 0, 0, 0);
	return 0;
}

/* The kernel allows bpf_probe_read_kernel only to GPL-compatible programs. */
char LICENSE[] SEC("license") = "GPL";
