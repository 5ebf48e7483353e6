package cgroupfstest

import (
	"fmt"

	"github.com/podline/podline/cgroupfs"
)

// memoryStatV1 is a v1 memory.stat as a 6.x kernel prints it: the cgroup's
// own counters, then the hierarchical total_* ones the Reader wants, so a
// parser has lines to skip before and between them.
func memoryStatV1(s cgroupfs.Stats, inactive, limit uint64) string {
	activeFile := uint64(0)
	if s.MemoryCache > inactive {
		activeFile = s.MemoryCache - inactive
	}
	own := fmt.Sprintf(`cache %[1]d
rss %[2]d
rss_huge 0
shmem 0
mapped_file %[3]d
dirty 8192
writeback 0
workingset_refault_anon 0
workingset_refault_file 17
swap 0
swapcached 0
pgpgin 4242
pgpgout 1717
pgfault %[4]d
pgmajfault %[5]d
inactive_anon 0
active_anon %[2]d
inactive_file %[6]d
active_file %[7]d
unevictable 0
hierarchical_memory_limit %[8]d
hierarchical_memsw_limit %[8]d
`, s.MemoryCache, s.MemoryRSS, s.MemoryCache/3, s.PageFaults, s.MajorPageFaults, inactive, activeFile, limit)
	total := fmt.Sprintf(`total_cache %[1]d
total_rss %[2]d
total_rss_huge 0
total_shmem 0
total_mapped_file %[3]d
total_dirty 8192
total_writeback 0
total_workingset_refault_anon 0
total_workingset_refault_file 17
total_swap 0
total_swapcached 0
total_pgpgin 4242
total_pgpgout 1717
total_pgfault %[4]d
total_pgmajfault %[5]d
total_inactive_anon 0
total_active_anon %[2]d
total_inactive_file %[6]d
total_active_file %[7]d
total_unevictable 0
`, s.MemoryCache, s.MemoryRSS, s.MemoryCache/3, s.PageFaults, s.MajorPageFaults, inactive, activeFile)
	return own + total
}

// memoryStatV2 is a cgroup2 memory.stat as a 6.x kernel prints it.
func memoryStatV2(s cgroupfs.Stats, inactive uint64) string {
	activeFile := uint64(0)
	if s.MemoryCache > inactive {
		activeFile = s.MemoryCache - inactive
	}
	return fmt.Sprintf(`anon %[1]d
file %[2]d
kernel 1019904
kernel_stack 65536
pagetables 73728
sec_pagetables 0
percpu 480
sock 0
vmalloc 0
shmem 0
zswap 0
zswapped 0
file_mapped %[3]d
file_dirty 0
file_writeback 0
swapcached 0
anon_thp 0
file_thp 0
shmem_thp 0
inactive_anon %[1]d
active_anon 0
inactive_file %[4]d
active_file %[5]d
unevictable 0
slab_reclaimable 337920
slab_unreclaimable 273544
slab 611464
workingset_refault_anon 0
workingset_refault_file 0
workingset_activate_anon 0
workingset_activate_file 0
workingset_restore_anon 0
workingset_restore_file 0
workingset_nodereclaim 0
pgdemote_kswapd 0
pgdemote_direct 0
pgdemote_khugepaged 0
pgpromote_success 0
pgscan 0
pgsteal 0
pgscan_kswapd 0
pgscan_direct 0
pgscan_khugepaged 0
pgsteal_kswapd 0
pgsteal_direct 0
pgsteal_khugepaged 0
pgfault %[6]d
pgmajfault %[7]d
pgrefill 0
pgactivate 0
pgdeactivate 0
pglazyfree 0
pglazyfreed 0
swpin_zero 0
swpout_zero 0
zswpin 0
zswpout 0
zswpwb 0
thp_fault_alloc 0
thp_collapse_alloc 0
thp_swpout 0
thp_swpout_fallback 0
numa_pages_migrated 0
numa_pte_updates 0
numa_hint_faults 0
`, s.MemoryRSS, s.MemoryCache, s.MemoryCache/3, inactive, activeFile, s.PageFaults, s.MajorPageFaults)
}
