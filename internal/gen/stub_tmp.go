package gen
func (p *Program) rustSource() string { return "" }
func (p *Program) zigSource() string { return "" }
