// Package autostart owns starting the agent with the user's session: an XDG
// autostart entry on Linux and other free Unix systems
// ($XDG_CONFIG_HOME/autostart/<name>.desktop), the per-user Run key of the
// Windows registry (HKCU\Software\Microsoft\Windows\CurrentVersion\Run), and a
// LaunchAgent property list on macOS (~/Library/LaunchAgents/<label>.plist).
//
// Enable, Disable and Enabled act on the current platform; the command
// "cfe-agent autostart" and the tray's checkbox both use them. The contents
// written on each platform come from pure functions (DesktopEntry,
// LaunchAgentPlist, RunCommand), so they are tested on any machine.
package autostart
