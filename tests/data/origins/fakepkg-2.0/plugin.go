package plugin

import "fmt"

func (m *NvidiaDevicePlugin) Allocate(req *AllocateRequest) error {
	for _, id := range req.DevicesIDs {
		if !m.deviceExists(id) {
			return fmt.Errorf("invalid allocation request for '%s': unknown device: %s", m.resourceName, id)
		}
	}
	klog.Warningf("Failed to initialize NVML: %v. Please see the troubleshooting guide", nil)
	return nil
}
