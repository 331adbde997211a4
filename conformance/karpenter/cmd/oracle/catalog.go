package main

// The instance-type data gpuplan simulates with: catalogs/<region>.json (gpuplan's src/catalog) and the ENI limits of
// src/simulate/eni-limits.tsv, turned back into the EC2 DescribeInstanceTypes shape (ec2types.InstanceTypeInfo) that the
// AWS provider's own resolver reads (aws/karpenter-provider-aws pkg/providers/instancetype/types.go NewInstanceType).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

type price struct {
	USDPerHour float64 `json:"usd_per_hour"`
	Source     string  `json:"source"`
}

type gpu struct {
	Name         string `json:"name"`
	Manufacturer string `json:"manufacturer"`
	Count        int32  `json:"count"`
	MemoryMiB    int32  `json:"memory_mib"`
}

type neuron struct {
	Name           string `json:"name"`
	Count          int32  `json:"count"`
	CoresPerDevice int32  `json:"cores_per_device"`
	MemoryMiB      int32  `json:"memory_mib"`
}

type catalogType struct {
	Name              string           `json:"name"`
	VCPU              int32            `json:"vcpu"`
	MemoryMiB         int64            `json:"memory_mib"`
	Arch              []string         `json:"arch"`
	CurrentGeneration bool             `json:"current_generation"`
	BareMetal         bool             `json:"bare_metal"`
	EFA               bool             `json:"efa"`
	LocalNVMeGB       *int64           `json:"local_nvme_gb"`
	GPUs              []gpu            `json:"gpus"`
	Neuron            *neuron          `json:"neuron"`
	CapacityTypes     []string         `json:"capacity_types"`
	Zones             []string         `json:"zones"`
	OnDemand          *price           `json:"on_demand"`
	Spot              map[string]price `json:"spot"`
}

type catalog struct {
	Region  string   `json:"region"`
	Zones   []string `json:"zones"`
	Sources map[string]struct {
		Estimate bool `json:"estimate"`
	} `json:"sources"`
	InstanceTypes []catalogType `json:"instance_types"`
	// Prices as gpuplan bills them, by type/capacity type/zone (filled while building offerings).
	prices map[string]priceInfo
}

func (c *catalog) estimate(p price) bool { return c.Sources[p.Source].Estimate }

func loadCatalog(dir, region string) (*catalog, error) {
	b, err := os.ReadFile(filepath.Join(dir, region+".json"))
	if err != nil {
		return nil, fmt.Errorf("catalog for %s: %w", region, err)
	}
	c := &catalog{}
	if err := json.Unmarshal(b, c); err != nil {
		return nil, fmt.Errorf("catalog %s: %w", region, err)
	}
	return c, nil
}

// eniLimit is a type's network data the catalog lacks: ENIs, IPv4 addresses per ENI, and EFA interfaces (0: none).
type eniLimit struct{ enis, ipv4, efa int32 }

// loadENILimits reads gpuplan's src/simulate/eni-limits.tsv (type, max ENIs on the default network card, IPv4 per ENI).
func loadENILimits(path string) (map[string]eniLimit, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ENI limits: %w", err)
	}
	defer f.Close()
	out := map[string]eniLimit{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		l := s.Text()
		if strings.HasPrefix(l, "#") {
			continue
		}
		p := strings.Split(l, "\t")
		if len(p) < 3 {
			continue
		}
		e, _ := strconv.Atoi(p[1])
		i, _ := strconv.Atoi(p[2])
		out[p[0]] = eniLimit{enis: int32(e), ipv4: int32(i)}
	}
	return out, s.Err()
}

// addEFAInterfaces reads gpuplan's src/catalog/efa-interfaces.tsv (type, NetworkInfo.EfaInfo.MaximumEfaInterfaces)
// into the limits; a missing file leaves every type without EFA interfaces, as the catalog alone would.
func addEFAInterfaces(path string, limits map[string]eniLimit) error {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		return err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		name, count, ok := strings.Cut(line, "\t")
		n, err := strconv.Atoi(strings.TrimSpace(count))
		if !ok || err != nil {
			return fmt.Errorf("%s: bad line %q", path, line)
		}
		limit, known := limits[name]
		if !known {
			limit = eniLimit{enis: 1, ipv4: 109}
		}
		limit.efa = int32(n)
		limits[name] = limit
	}
	return s.Err()
}

// info is the DescribeInstanceTypes record of a catalog type, with the fields types.go reads. Fields the catalog does
// not carry (CPU manufacturer and clock, EBS bandwidth, hypervisor, encryption in transit) are left
// unset, so their labels are absent (DoesNotExist) here as they are in gpuplan.
func (t *catalogType) info(eni map[string]eniLimit) ec2types.InstanceTypeInfo {
	arch := make([]ec2types.ArchitectureType, 0, len(t.Arch))
	for _, a := range t.Arch {
		if a == "amd64" {
			a = "x86_64"
		}
		arch = append(arch, ec2types.ArchitectureType(a))
	}
	var usage []ec2types.UsageClassType
	for _, ct := range t.CapacityTypes {
		if ct == "spot" || ct == "on-demand" {
			usage = append(usage, ec2types.UsageClassType(ct))
		}
	}
	limit, ok := eni[t.Name]
	if !ok {
		// types.go has no fallback for a type without NetworkInfo; gpuplan uses 110 pods (instances.rs max_pods).
		// 110 = 4 ENIs × (37 − 1) − 34 cannot be expressed; use 1 ENI × 109 IPs: 1×(109−1)+2 = 110.
		limit = eniLimit{enis: 1, ipv4: 109}
	}
	info := ec2types.InstanceTypeInfo{
		InstanceType:          ec2types.InstanceType(t.Name),
		VCpuInfo:              &ec2types.VCpuInfo{DefaultVCpus: aws.Int32(t.VCPU)},
		MemoryInfo:            &ec2types.MemoryInfo{SizeInMiB: aws.Int64(t.MemoryMiB)},
		ProcessorInfo:         &ec2types.ProcessorInfo{SupportedArchitectures: arch},
		SupportedUsageClasses: usage,
		CurrentGeneration:     aws.Bool(t.CurrentGeneration),
		BareMetal:             aws.Bool(t.BareMetal),
		NetworkInfo: &ec2types.NetworkInfo{
			DefaultNetworkCardIndex:   aws.Int32(0),
			NetworkCards:              []ec2types.NetworkCardInfo{{MaximumNetworkInterfaces: aws.Int32(limit.enis)}},
			MaximumNetworkInterfaces:  aws.Int32(limit.enis),
			Ipv4AddressesPerInterface: aws.Int32(limit.ipv4),
			EfaSupported:              aws.Bool(t.EFA),
		},
	}
	if limit.efa > 0 {
		// types.go `efas`: the node's vpc.amazonaws.com/efa capacity.
		info.NetworkInfo.EfaInfo = &ec2types.EfaInfo{MaximumEfaInterfaces: aws.Int32(limit.efa)}
	}
	if t.LocalNVMeGB != nil {
		info.InstanceStorageInfo = &ec2types.InstanceStorageInfo{TotalSizeInGB: t.LocalNVMeGB, NvmeSupport: ec2types.EphemeralNvmeSupportRequired}
	}
	if len(t.GPUs) > 0 {
		info.GpuInfo = &ec2types.GpuInfo{}
		for _, g := range t.GPUs {
			info.GpuInfo.Gpus = append(info.GpuInfo.Gpus, ec2types.GpuDeviceInfo{
				Name: aws.String(g.Name), Manufacturer: aws.String(g.Manufacturer), Count: aws.Int32(g.Count),
				MemoryInfo: &ec2types.GpuDeviceMemoryInfo{SizeInMiB: aws.Int32(g.MemoryMiB)},
			})
		}
	}
	if t.Neuron != nil {
		info.NeuronInfo = &ec2types.NeuronInfo{NeuronDevices: []ec2types.NeuronDeviceInfo{{
			Name: aws.String(t.Neuron.Name), Count: aws.Int32(t.Neuron.Count),
			CoreInfo: &ec2types.NeuronDeviceCoreInfo{Count: aws.Int32(t.Neuron.CoresPerDevice)},
		}}}
	}
	return info
}
