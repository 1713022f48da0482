package autostart

// Describe is the technician's line on the agent's start with the session
// ("cfe-agent autostart status"), in Spanish: whose entry starts it (this
// user's, the installer's for every user, both), whether this user hid the
// installer's, and where each entry is.
func (s Status) Describe() string {
	const head = "inicio con el sistema: "
	switch {
	case s.Machine && s.Hidden:
		return head + "desactivado para este usuario (" + s.UserPath + " oculta la entrada del instalador, " + s.MachinePath + ")"
	case s.Replaced:
		return head + "activado para este usuario (" + s.UserPath + "), en lugar de la entrada del instalador (" + s.MachinePath + ")"
	case s.Machine && s.User:
		return head + "activado para todos los usuarios por el instalador (" + s.MachinePath + ") y también para este usuario (" + s.UserPath + ")"
	case s.Machine:
		return head + "activado para todos los usuarios por el instalador (" + s.MachinePath + ")"
	case s.User:
		return head + "activado (" + s.UserPath + ")"
	}
	return head + "desactivado"
}
