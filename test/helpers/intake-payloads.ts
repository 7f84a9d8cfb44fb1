// Line protocol bodies as the senders build them, for tests that need their keys and fields: the
// lines test/http/intake-influx.test.ts sends (Proxmox VE's v2 write, Telegraf's v1 write), with
// the rest of each measurement's fields as the senders write them.
//
// Proxmox VE (PVE::Status::InfluxDB, HTTP mode, nanoseconds): a node's status as `system`
// (uptime), `cpustat`, `memory`, `blockstat` and `nics` (one line per interface, tag `instance`),
// tagged `object=nodes,host=<node>`; a guest as `system,object=qemu|lxc,vmid=…,nodename=…,host=<name>`;
// a storage as `system,object=storages,nodename=…,host=<storage id>,type=…`. Strings (`name`,
// `status`) are quoted.
export const T0_NS = 1_769_248_805_000_000_000n; // 2026-01-24T10:00:05Z

/** At `t0Ns` (default 2026-01-24T10:00:05Z) plus `offsetSeconds`. */
export function proxmoxBody(offsetSeconds = 0, t0Ns = T0_NS): string {
  const t = String(t0Ns + BigInt(offsetSeconds) * 1_000_000_000n);
  return [
    `system,object=nodes,host=pve1 uptime=86400 ${t}`,
    `cpustat,object=nodes,host=pve1 avg1=0.5,avg5=0.25,avg15=0.2,cpu=0.031,cpus=8,guest=0,guest_nice=0,idle=0.95,iowait=0.01,irq=0,nice=0,softirq=0.001,steal=0,system=0.015,user=0.12,wait=0.004 ${t}`,
    `memory,object=nodes,host=pve1 memfree=20132659200,memshared=0,memtotal=33554432000,memused=13421772800,swapfree=8589934592,swaptotal=8589934592,swapused=0 ${t}`,
    `blockstat,object=nodes,host=pve1 avail=80000000000,total=100000000000,used=20000000000 ${t}`,
    `nics,object=nodes,host=pve1,instance=vmbr0 receive=123456789,transmit=987654321 ${t}`,
    `system,object=qemu,vmid=100,nodename=pve1,host=web cpu=0.25,cpus=2,disk=0,diskread=104857600,diskwrite=52428800,maxdisk=34359738368,maxmem=4294967296,mem=1073741824,name="web",netin=1234567,netout=7654321,status="running",template=0,uptime=3600 ${t}`,
    `system,object=lxc,vmid=101,nodename=pve1,host=dns cpu=0.01,cpus=1,disk=1073741824,diskread=0,diskwrite=4096,maxdisk=8589934592,maxmem=536870912,mem=67108864,name="dns",netin=5000,netout=6000,status="running",template=0,uptime=7200 ${t}`,
    `system,object=storages,nodename=pve1,host=local,type=dir active=1,avail=80000000000,content="iso,vztmpl,backup",enabled=1,shared=0,total=100000000000,used=20000000000 ${t}`,
    `system,object=storages,nodename=pve1,host=local-lvm,type=lvmthin active=1,avail=300000000000,enabled=1,shared=0,total=400000000000,used=100000000000 ${t}`,
  ].join('\n');
}

// Telegraf 1.x with [[inputs.cpu]] (percpu = false, totalcpu = true), [[inputs.mem]],
// [[inputs.disk]], [[inputs.net]] (with its `interface=all` protocol line) and [[inputs.system]],
// seconds precision as in intake-influx.test.ts's v1 write.
export function telegrafBody(host = 'nas', atSeconds = Number(T0_NS / 1_000_000_000n)): string {
  const t = String(atSeconds);
  return [
    `cpu,cpu=cpu-total,host=${host} usage_guest=0,usage_guest_nice=0,usage_idle=90,usage_iowait=1.5,usage_irq=0,usage_nice=0,usage_softirq=0.2,usage_steal=0,usage_system=3.3,usage_user=5 ${t}`,
    `mem,host=${host} active=1000i,available=300i,available_percent=75,buffered=10i,cached=100i,free=200i,inactive=50i,slab=5i,total=400i,used=100i,used_percent=25 ${t}`,
    `disk,device=sda1,fstype=ext4,host=${host},mode=rw,path=/ free=1000u,inodes_free=900u,inodes_total=1000u,inodes_used=100u,total=2000u,used=1000u,used_percent=50 ${t}`,
    `net,host=${host},interface=eth0 bytes_recv=123456789i,bytes_sent=1234i,drop_in=0i,drop_out=0i,err_in=0i,err_out=0i,packets_recv=1000i,packets_sent=10i ${t}`,
    `net,host=${host},interface=all icmp_inerrors=0i,tcp_activeopens=12i,udp_indatagrams=40i ${t}`,
    `system,host=${host} load1=0.5,load15=0.2,load5=0.3,n_cpus=4i,n_users=1i,uptime=3600i ${t}`,
  ].join('\n');
}
