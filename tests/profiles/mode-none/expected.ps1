# cordon: Windows Defender Firewall rules made by `cordon profile windows-firewall`;
# do not edit.  network: none: no traffic in or out.
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

# Program 'C:\Tools\agent\agent.exe'
if (-not (Test-Path -LiteralPath 'C:\Tools\agent\agent.exe' -PathType Leaf)) {
    throw ("cordon: no program at " + 'C:\Tools\agent\agent.exe')
}
$t = @{ Program = 'C:\Tools\agent\agent.exe' }
New-NetFirewallRule @common @t -Direction Inbound -DisplayName "cordon: program: block inbound" | Out-Null
New-NetFirewallRule @common @t -Direction Outbound -DisplayName "cordon: program: block all outbound" | Out-Null

# Program 'C:\Program Files\nodejs\node.exe'
if (-not (Test-Path -LiteralPath 'C:\Program Files\nodejs\node.exe' -PathType Leaf)) {
    throw ("cordon: no program at " + 'C:\Program Files\nodejs\node.exe')
}
$t = @{ Program = 'C:\Program Files\nodejs\node.exe' }
New-NetFirewallRule @common @t -Direction Inbound -DisplayName "cordon: program: block inbound" | Out-Null
New-NetFirewallRule @common @t -Direction Outbound -DisplayName "cordon: program: block all outbound" | Out-Null

Get-NetFirewallRule -Group $group -ErrorAction SilentlyContinue |
    Format-Table DisplayName, Direction, Action
