/* kernel.h: the few kernel types podline's BPF programs read, declared by
 * hand instead of a generated multi-megabyte vmlinux.h. Every struct carries
 * preserve_access_index, so field offsets are CO-RE relocations resolved
 * against the running kernel's BTF at load time: only the fields named here
 * must exist, not this layout. */
#pragma once

typedef unsigned char u8;
typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef int pid_t;
typedef _Bool bool;
#define true 1
#define false 0

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct upid {
	int nr;
	struct pid_namespace *ns;
};

struct pid {
	unsigned int level;
	struct upid numbers[];
};

struct kernfs_node {
	u64 id;
};

struct cgroup_root {
	int hierarchy_id;
};

struct cgroup {
	struct kernfs_node *kn;
	struct cgroup_root *root;
};

struct css_set {
	struct cgroup *dfl_cgrp;
};

struct signal_struct {
	int group_exit_code;
	unsigned int flags;
};

struct task_struct {
	int exit_code;
	pid_t pid;
	pid_t tgid;
	struct task_struct *group_leader;
	struct pid *thread_pid;
	struct signal_struct *signal;
	struct css_set *cgroups;
};

#pragma clang attribute pop

/* include/linux/sched/signal.h; a #define, so not in BTF. */
#define SIGNAL_GROUP_EXIT 0x00000004
