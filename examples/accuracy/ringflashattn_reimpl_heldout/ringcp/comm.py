"""Point-to-point exchange with the ring neighbours: send to rank + 1,
receive from rank - 1, batched and asynchronous."""

import torch.distributed as dist


# portq: ports ringflashattn:ring_flash_attn/utils.py::RingComm @10d992c
class RingComm:
    # portq: ports ringflashattn:ring_flash_attn/utils.py::RingComm.__init__ @10d992c
    def __init__(self, group):
        self._group = group
        self._pending = []
        self._handles = None
        self.rank = dist.get_rank(group)
        self.world_size = dist.get_world_size(group)
        self.send_rank = (self.rank + 1) % self.world_size
        self.recv_rank = (self.rank - 1) % self.world_size
        if group is not None:
            self.send_rank = dist.get_global_rank(group, self.send_rank)
            self.recv_rank = dist.get_global_rank(group, self.recv_rank)

    # portq: ports ringflashattn:ring_flash_attn/utils.py::RingComm.send_recv @10d992c
    def send_recv(self, to_send, recv_tensor=None):
        incoming = recv_tensor if recv_tensor is not None else to_send.new_empty(to_send.shape)
        self._pending.append(dist.P2POp(dist.isend, to_send, self.send_rank, group=self._group))
        self._pending.append(dist.P2POp(dist.irecv, incoming, self.recv_rank, group=self._group))
        return incoming

    # portq: ports ringflashattn:ring_flash_attn/utils.py::RingComm.commit @10d992c
    def commit(self):
        if self._handles is not None:
            raise RuntimeError("commit called twice")
        self._handles = dist.batch_isend_irecv(self._pending)

    # portq: ports ringflashattn:ring_flash_attn/utils.py::RingComm.wait @10d992c
    def wait(self):
        if self._handles is None:
            raise RuntimeError("wait called before commit")
        for handle in self._handles:
            handle.wait()
        self._handles = None
        self._pending = []
