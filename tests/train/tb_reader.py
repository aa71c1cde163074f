"""Reads a run dir's TensorBoard event files with TensorBoard's own EventAccumulator and prints
every scalar as a JSON line {"tag", "step", "value"}, then the "config" text summaries as
{"text", "step", "value"}, then the hparams of each session start as {"hparam", "value"} (tests/train/tensorboard_test.cpp compares them with metrics.jsonl,
steps.jsonl and config.json). Usage: tb_reader.py RUN_DIR"""
import json
import sys

from tensorboard.backend.event_processing import event_accumulator as ea
from tensorboard.plugins.hparams import plugin_data_pb2


def main(run_dir):
    # size_guidance 0: keep every event (the default samples scalars down to 10000, tensors 10).
    acc = ea.EventAccumulator(run_dir, size_guidance={ea.SCALARS: 0, ea.TENSORS: 0})
    acc.Reload()
    tags = acc.Tags()
    for tag in sorted(tags["scalars"]):
        for e in acc.Scalars(tag):
            print(json.dumps({"tag": tag, "step": e.step, "value": e.value}))
    for tag in sorted(tags["tensors"]):
        for e in acc.Tensors(tag):
            text = b"".join(e.tensor_proto.string_val).decode("utf-8")
            print(json.dumps({"text": tag, "step": e.step, "value": text}))
    for tag, content in acc.PluginTagToContent("hparams").items():
        data = plugin_data_pb2.HParamsPluginData.FromString(content)
        for name, v in sorted(data.session_start_info.hparams.items()):
            print(json.dumps({"hparam": name, "value": getattr(v, v.WhichOneof("kind"))}))


if __name__ == "__main__":
    main(sys.argv[1])
