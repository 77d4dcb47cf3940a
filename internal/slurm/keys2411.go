package slurm

// Code below lists the setting names of Slurm 24.11.5's man pages
// (slurm.conf(5), cgroup.conf(5) of Debian 13's packages), extracted from the
// top-level entries of each section. It is the complete set the provider
// can check exhaustively; keysChanged records what other releases added or
// removed.

// keys2411 are the settings Slurm 24.11 knows, by file or line.
var keys2411 = map[Scope][]string{
	ScopeSlurmConf: words(`
		AccountingStorageBackupHost AccountingStorageEnforce AccountingStorageExternalHost AccountingStorageHost
		AccountingStorageParameters AccountingStoragePass AccountingStoragePort AccountingStorageTRES
		AccountingStorageType AccountingStorageUser AccountingStoreFlags AcctGatherEnergyType
		AcctGatherFilesystemType AcctGatherInterconnectType AcctGatherNodeFreq AcctGatherProfileType
		AllowSpecResourcesUsage AuthAltParameters AuthAltTypes AuthInfo AuthType BackupAddr BackupController
		BatchStartTimeout BcastExclude BcastParameters BurstBufferType CliFilterPlugins ClusterName
		CommunicationParameters CompleteWait ControlAddr ControlMachine CpuFreqDef CpuFreqGovernors CredType
		DebugFlags DefCpuPerGPU DefMemPerCPU DefMemPerGPU DefMemPerNode DependencyParameters DisableRootJobs
		EioTimeout EnforcePartLimits Epilog EpilogMsgTime EpilogSlurmctld FairShareDampeningFactor
		FederationParameters FirstJobId GetEnvTimeout GresTypes GroupUpdateForce GroupUpdateTime HashPlugin
		HealthCheckInterval HealthCheckNodeState HealthCheckProgram InactiveLimit InteractiveStepOptions
		JobAcctGatherFrequency JobAcctGatherParams JobAcctGatherType JobCompHost JobCompLoc JobCompParams
		JobCompPass JobCompPort JobCompType JobCompUser JobContainerType JobFileAppend JobRequeue JobSubmitPlugins
		KillOnBadExit KillWait LaunchParameters Licenses LogTimeFormat MailDomain MailProg MaxArraySize
		MaxBatchRequeue MaxDBDMsgs MaxJobCount MaxJobId MaxMemPerCPU MaxMemPerNode MaxNodeCount MaxStepCount
		MaxTasksPerNode MCSParameters MCSPlugin MessageTimeout MinJobAge MpiDefault MpiParams NodeFeaturesPlugins
		OverTimeLimit PluginDir PlugStackConfig PreemptExemptTime PreemptMode PreemptParameters PreemptType
		PrEpParameters PrEpPlugins PriorityCalcPeriod PriorityDecayHalfLife PriorityFavorSmall PriorityFlags
		PriorityMaxAge PriorityParameters PrioritySiteFactorParameters PrioritySiteFactorPlugin PriorityType
		PriorityUsageResetPeriod PriorityWeightAge PriorityWeightAssoc PriorityWeightFairshare
		PriorityWeightJobSize PriorityWeightPartition PriorityWeightQOS PriorityWeightTRES PrivateData
		ProctrackType Prolog PrologEpilogTimeout PrologFlags PrologSlurmctld PropagatePrioProcess
		PropagateResourceLimits PropagateResourceLimitsExcept RebootProgram ReconfigFlags RequeueExit
		RequeueExitHold ResumeFailProgram ResumeProgram ResumeRate ResumeTimeout ResvEpilog ResvOverRun ResvProlog
		ReturnToService SchedulerParameters SchedulerTimeSlice SchedulerType ScronParameters SelectType
		SelectTypeParameters SlurmctldAddr SlurmctldDebug SlurmctldHost SlurmctldLogFile SlurmctldParameters
		SlurmctldPidFile SlurmctldPort SlurmctldPrimaryOffProg SlurmctldPrimaryOnProg SlurmctldSyslogDebug
		SlurmctldTimeout SlurmdDebug SlurmdLogFile SlurmdParameters SlurmdPidFile SlurmdPort SlurmdSpoolDir
		SlurmdSyslogDebug SlurmdTimeout SlurmdUser SlurmSchedLogFile SlurmSchedLogLevel SlurmUser SrunEpilog
		SrunPortRange SrunProlog StateSaveLocation SuspendExcNodes SuspendExcParts SuspendExcStates SuspendProgram
		SuspendRate SuspendTime SuspendTimeout SwitchParameters SwitchType TaskEpilog TaskPlugin TaskPluginParam
		TaskProlog TCPTimeout TmpFS TopologyParam TopologyPlugin TrackWCKey TreeWidth UnkillableStepProgram
		UnkillableStepTimeout UsePAM VSizeFactor WaitTime
	`),
	ScopeNode: words(`
		BcastAddr Boards CoreSpecCount CoresPerSocket CpuBind CPUs CpuSpecList Features Gres MemSpecLimit NodeAddr
		NodeHostname NodeName Port Procs RealMemory Reason RestrictedCoresPerGPU Sockets SocketsPerBoard State
		ThreadsPerCore TmpDisk Weight
	`),
	ScopePartition: words(`
		AllocNodes AllowAccounts AllowGroups AllowQos Alternate CpuBind Default DefaultTime DefCpuPerGPU
		DefMemPerCPU DefMemPerGPU DefMemPerNode DenyAccounts DenyQos DisableRootJobs ExclusiveTopo ExclusiveUser
		GraceTime Hidden LLN MaxCPUsPerNode MaxCPUsPerSocket MaxMemPerCPU MaxMemPerNode MaxNodes MaxTime MinNodes
		Nodes OverSubscribe OverTimeLimit PartitionName PowerDownOnIdle PreemptMode PriorityJobFactor PriorityTier
		QOS ReqResv ResumeTimeout RootOnly SelectTypeParameters Shared State SuspendTime SuspendTimeout
		TRESBillingWeights
	`),
	ScopeCgroup: words(`
		AllowedRAMSpace AllowedSwapSpace CgroupMountpoint CgroupPlugin ConstrainCores ConstrainDevices
		ConstrainRAMSpace ConstrainSwapSpace EnableControllers IgnoreSystemd IgnoreSystemdOnFailure MaxRAMPercent
		MaxSwapPercent MemorySwappiness MinRAMSpace SignalChildrenProcesses SystemdTimeout
	`),
}
