package stages

// StaticTurns returns the number of full names the pipeline keeps a
// StaticTurn for, so tests can check that none is left behind.
func (p *Pipeline) StaticTurns() int { return p.turns.len() }
