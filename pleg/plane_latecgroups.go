package pleg

// The cgroup notifier may be unavailable when podline starts (the inotify
// instance limit, fs.inotify.max_user_instances, is the user's: another
// process may hold every instance) and become available later. The plane
// then takes it over without a restart.

// SetCgroups gives the plane a cgroup notifier made after it started, and
// asks it to watch every container and sandbox registered so far that has
// a cgroup. A container registered while SetCgroups runs may be left to
// the other sources. Only for a plane built without Cgroups: it does not
// replace a notifier.
func (p *Plane) SetCgroups(c CgroupWatcher) {
	p.mu.Lock()
	if p.cgroups != nil {
		p.mu.Unlock()
		panic("BUG: pleg: SetCgroups on a plane that has a cgroup notifier")
	}
	p.cgroups = c
	var todo []*watched
	for _, w := range p.byID {
		if w.path != "" && !w.notified {
			todo = append(todo, w)
		}
	}
	p.mu.Unlock()

	watchedNow := 0
	for _, w := range todo {
		id, err := c.Watch(w.path)
		if err != nil {
			continue // gone since, or the notifier cannot: the other sources carry on
		}
		p.mu.Lock()
		switch {
		case p.byID[w.id] != w:
			// Forgotten meanwhile: forget did not know to unwatch it.
			p.mu.Unlock()
			c.Unwatch(id)
			continue
		case w.cgroupID == 0:
			w.cgroupID = id
			p.byCgroup[id] = w
		}
		w.notified = true
		p.mu.Unlock()
		watchedNow++
	}
	p.cfg.Log.Info("cgroup notification source available", "watched", watchedNow, "registered", len(todo))
}

// cgroupWatcher returns the cgroup notifier, nil while there is none.
func (p *Plane) cgroupWatcher() CgroupWatcher {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cgroups
}
