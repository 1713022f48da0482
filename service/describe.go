package service

import "strings"

// Describe is the technician's line on the state of the service name
// ("cfe-agent service status"), in Spanish: installed or not (by the
// package, naming its unit), running or not with the manager's detail, and
// whether it starts with the machine.
func (st State) Describe(name string) string {
	if !st.Installed {
		return "servicio " + name + ": no instalado"
	}
	s := "servicio " + name + ": instalado, "
	if st.Running {
		s += "en ejecución"
	} else {
		s += "no está en ejecución"
	}
	s += " (" + st.Detail + "), "
	if st.Packaged {
		s = strings.Replace(s, "instalado, ", "instalado por el paquete ("+st.Unit+"), ", 1)
	}
	if st.Enabled {
		return s + "se inicia al arrancar el equipo"
	}
	return s + "no se inicia al arrancar el equipo"
}
