# cordon: Windows Defender Firewall rules made by `cordon profile windows-firewall`;
# do not edit.  network: host: UNFILTERED; no rule is made.
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
Write-Warning 'cordon: network mode host: no firewall rule; the traffic is neither filtered nor logged'

Get-NetFirewallRule -Group $group -ErrorAction SilentlyContinue |
    Format-Table DisplayName, Direction, Action
