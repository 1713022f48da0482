// Package wintest tests the Windows build of the agent where it runs, under
// Wine on the Linux machines of CI (internal/testtool/wine):
//
//   - TestWine_Agent cross-builds cfe-agent.exe as it ships (GUI subsystem),
//     starts `serve` with a Windows data directory, signs an e-Ticket, checks
//     the XML and a PDF rendered by the Windows executable with the Linux
//     tools, stops it, and reopens its data directory with the Linux build.
//   - TestWine_WindowsUnitTests runs the unit tests of the packages with
//     Windows code as Windows test executables (windowsUnits lists them).
//
// The package holds tests only; its tests run on Linux with wine installed
// and skip elsewhere (fail under CFE_STRICT_TOOLS=1).
package wintest
