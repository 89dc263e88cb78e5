#!/usr/bin/env python3
"""Write tests/queue/reshape_external_shape.onnx and its external data file
reshape_external_shape.bin: Conv -> Reshape whose shape is an int64
initializer kept in the external file. A worker of the queue gets the model
file alone, and the shape is needed to import the graph even without weights:
`hetc jobs submit` must refuse it (test_jobs_cli.sh). Needs the onnx package
(the committed files are what the test reads).

Usage: python3 tests/queue/make_external_shape.py [--out DIR]
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, external_data_helper, helper, numpy_helper

NAME = "reshape_external_shape"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)))
    out = parser.parse_args().out
    rng = np.random.RandomState(31)
    weight = numpy_helper.from_array((rng.standard_normal([4, 3, 3, 3]) * 0.3).astype(np.float32), "conv.weight")
    shape = numpy_helper.from_array(np.array([1, -1], dtype=np.int64), "shape")
    nodes = [
        helper.make_node("Conv", ["input", "conv.weight"], ["conv_out"], name="conv", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Reshape", ["conv_out", "shape"], ["output"], name="reshape"),
    ]
    graph = helper.make_graph(nodes, NAME, [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 256])],
                              [weight, shape])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="hetc-tests")
    model.ir_version = 7
    stored = model.graph.initializer[1]  # make_graph copied the initializers
    with open(os.path.join(out, NAME + ".bin"), "wb") as f:
        f.write(stored.raw_data)
    external_data_helper.set_external_data(stored, NAME + ".bin")
    stored.data_location = TensorProto.EXTERNAL
    stored.ClearField("raw_data")
    path = os.path.join(out, NAME + ".onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    onnx.checker.check_model(path)  # by path: the external file is found beside it


if __name__ == "__main__":
    main()
