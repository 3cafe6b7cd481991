# cordon: Windows Defender Firewall rules made by `cordon profile windows-firewall`;
# do not edit.  network: proxy: out only to 127.0.0.1 and ::1, TCP port 8080.
# Run it in an elevated PowerShell.  Undo it with the script that
# `cordon profile windows-firewall --remove` prints.
#Requires -RunAsAdministrator
Set-StrictMode -Version 3
$ErrorActionPreference = 'Stop'
$group = 'cordon'

# The rules apply only where the firewall is on.
$off = @(Get-NetFirewallProfile | Where-Object { $_.Enabled -ne 'True' })
if ($off.Count -ne 0) {
    throw "cordon: the firewall is off for: $($off.Name -join ', '); turn it on first"
}

# What an earlier run of this script made goes first.
Get-NetFirewallRule -Group $group -ErrorAction SilentlyContinue |
    Remove-NetFirewallRule

$notLoopback = @('0.0.0.0-126.255.255.255', '128.0.0.0-255.255.255.255', '::', '::2-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')
$loopback = @('127.0.0.0/8', '::1')
$common = @{ Group = $group; Action = 'Block'; Profile = 'Any'; Enabled = 'True' }

# Program 'C:\Users\O''Brien\$(calc)\agent.exe'
if (-not (Test-Path -LiteralPath 'C:\Users\O''Brien\$(calc)\agent.exe' -PathType Leaf)) {
    throw ("cordon: no program at " + 'C:\Users\O''Brien\$(calc)\agent.exe')
}
$t = @{ Program = 'C:\Users\O''Brien\$(calc)\agent.exe' }
New-NetFirewallRule @common @t -Direction Inbound -DisplayName "cordon: program: block inbound" `
    -RemoteAddress $notLoopback | Out-Null
New-NetFirewallRule @common @t -Direction Outbound -DisplayName "cordon: program: block all but loopback" `
    -RemoteAddress $notLoopback | Out-Null
New-NetFirewallRule @common @t -Direction Outbound -DisplayName "cordon: program: block loopback TCP but the proxy" `
    -Protocol TCP -RemoteAddress $loopback -RemotePort '1-8079', '8081-65535' | Out-Null
New-NetFirewallRule @common @t -Direction Outbound -DisplayName "cordon: program: block loopback UDP" `
    -Protocol UDP -RemoteAddress $loopback | Out-Null

# Local user 'it''s "me"', by SID: every process it runs.
$sid = ([System.Security.Principal.NTAccount]'it''s "me"').Translate(
    [System.Security.Principal.SecurityIdentifier]).Value
$t = @{ LocalUser = "D:(A;;CC;;;$sid)" }
New-NetFirewallRule @common @t -Direction Inbound -DisplayName "cordon: user: block inbound" `
    -RemoteAddress $notLoopback | Out-Null
New-NetFirewallRule @common @t -Direction Outbound -DisplayName "cordon: user: block all but loopback" `
    -RemoteAddress $notLoopback | Out-Null
New-NetFirewallRule @common @t -Direction Outbound -DisplayName "cordon: user: block loopback TCP but the proxy" `
    -Protocol TCP -RemoteAddress $loopback -RemotePort '1-8079', '8081-65535' | Out-Null
New-NetFirewallRule @common @t -Direction Outbound -DisplayName "cordon: user: block loopback UDP" `
    -Protocol UDP -RemoteAddress $loopback | Out-Null

Get-NetFirewallRule -Group $group -ErrorAction SilentlyContinue |
    Format-Table DisplayName, Direction, Action
