"""NetVLAD aggregation with ghost clusters over (32, 100, 512) local descriptors (32 clusters + 16 ghost).

Soft-assignment logits come from a matmul with the cluster matrix, then
BatchNorm1d (eval) and a softmax over the 48 clusters. The 16 ghost
columns are sliced off. The VLAD residuals are sum_n a_nk (x_n - c_k),
computed as a batched matmul (a^T x) minus a_sum * c. Each cluster's
residual is L2-normalised, flattened to 16384 features and L2-normalised
again. The model mixes two GEMM-like products with
transposes/slices/reductions and two normalisations. This is the video
aggregation head from KernelBench's level 3.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 32
NUM_FEATURES = 100
FEATURE_SIZE = 512
CLUSTER_SIZE = 32
GHOST_CLUSTERS = 16


class Model(nn.Module):
    """NetVLAD: softmax assignment (with ghost clusters), residual aggregation, intra+global L2 norm."""

    def __init__(self, cluster_size, feature_size, ghost_clusters):
        super().__init__()
        self.feature_size = feature_size
        self.cluster_size = cluster_size
        init_sc = 1 / math.sqrt(feature_size)
        clusters = cluster_size + ghost_clusters
        self.clusters = nn.Parameter(init_sc * torch.randn(feature_size, clusters))
        self.batch_norm = nn.BatchNorm1d(clusters)
        self.clusters2 = nn.Parameter(init_sc * torch.randn(1, feature_size, cluster_size))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, N, D = x.shape
        flat = x.view(-1, D)                                         # (B*N, D)
        assignment = self.batch_norm(torch.matmul(flat, self.clusters))
        assignment = F.softmax(assignment, dim=1)[:, : self.cluster_size]
        assignment = assignment.view(B, N, self.cluster_size)        # (B, N, K)
        a_sum = torch.sum(assignment, dim=1, keepdim=True)           # (B, 1, K)
        a = a_sum * self.clusters2                                   # (B, D, K)
        vlad = torch.matmul(assignment.transpose(1, 2), x)           # (B, K, D)
        vlad = vlad.transpose(1, 2) - a                              # (B, D, K)
        vlad = F.normalize(vlad, dim=1)
        vlad = vlad.reshape(B, self.cluster_size * D)
        return F.normalize(vlad, dim=1)


def get_inputs():
    return [torch.randn(BATCH, NUM_FEATURES, FEATURE_SIZE)]


def get_init_inputs():
    return [CLUSTER_SIZE, FEATURE_SIZE, GHOST_CLUSTERS]
