# cordon: removes the Windows Defender Firewall rules that
# `cordon profile windows-firewall` made (group 'cordon').
#Requires -RunAsAdministrator
Set-StrictMode -Version 3
$ErrorActionPreference = 'Stop'
$group = 'cordon'

Get-NetFirewallRule -Group $group -ErrorAction SilentlyContinue |
    Remove-NetFirewallRule
