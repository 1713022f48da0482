// Package wintest tests the Windows build of the agent where it runs, under
// Wine on the Linux machines of CI (internal/testtool/wine):
//
//   - TestWine_Agent builds cfe-agent.exe as it ships (`make windows`: GUI
//     subsystem, resources), starts `serve` with a Windows data directory,
//     signs an e-Ticket, checks the XML and a PDF rendered by the Windows
//     executable with the Linux tools, stops it the Windows way (taskkill
//     without /f, the end of the session: a clean close, exit 0), reopens
//     its data directory with the Linux build, and runs it as a service
//     whose module answers as soon as `service start` returns.
//   - TestWine_WindowsUnitTests runs the unit tests of the packages with
//     Windows code as Windows test executables (windowsUnits lists them).
//
// The package holds tests only; its tests run on Linux with wine installed
// and skip elsewhere (fail under CFE_STRICT_TOOLS=1).
package wintest
