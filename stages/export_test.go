package stages

// StaticTurns returns the number of full names the pipeline keeps a
// StaticTurn for, so tests can check that none is left behind.
func (p *Pipeline) StaticTurns() int { return p.turns.len() }

// MostStarts is the most starts the gate has let in at once.
func (g *StartGate) MostStarts() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.most
}

// Parked is the number of passes waiting at the gate.
func (g *StartGate) Parked() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.parked) - g.head
}
