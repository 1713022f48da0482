// Package autostart owns starting the agent with the user's session: an XDG
// autostart entry on Linux and other free Unix systems
// ($XDG_CONFIG_HOME/autostart/<name>.desktop), the per-user Run key of the
// Windows registry (HKCU\Software\Microsoft\Windows\CurrentVersion\Run), and a
// LaunchAgent property list on macOS (~/Library/LaunchAgents/<label>.plist).
//
// Installers may enable the agent for every user of the machine (the MSI's
// HKLM\...\Run value, the .deb's /etc/xdg/autostart file, /Library/
// LaunchAgents): this package never writes those. Query reports both. Enable
// writes no per-user entry that repeats the machine-wide one (it removes an
// old one: the agent would start twice), but keeps a Custom one (another data
// directory): on XDG a user's file replaces the system's of the same name;
// elsewhere both would start, and Enable returns ErrConflict. Disable turns a
// machine-wide XDG entry off for the user with a Hidden=true file of the same
// name; elsewhere it returns ErrMachineWide when the machine-wide entry still
// starts the agent.
//
// Enable, Disable, Enabled and Query act on the current platform; the command
// "cfe-agent autostart" and the tray's checkbox both use them. The contents
// written on each platform come from pure functions (DesktopEntry,
// LaunchAgentPlist, RunCommand), so they are tested on any machine; the
// enable/disable rules are tested over a fake platform.
package autostart
