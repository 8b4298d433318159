"""pyarrow's side of the projected IPC read benchmark (`cargo bench -p
strata-io --bench scan_ipc` runs it once per round).

    python benches/scan_ipc_pyarrow.py FILE COL,COL,... [--latency-ms MS --bytes-per-second BPS]

Reads the columns with `pyarrow.dataset` (format ipc, `columns=`) and
prints JSON: seconds (the read alone), requests and bytes. Requests are
counted by a file wrapper whose every read is one request; with
--latency-ms each request also waits that long plus its bytes over the
bandwidth, like one connection to a remote store. Without it the read runs
on the local file system, timed without the wrapper, and a second,
untimed read through the wrapper counts the requests.
"""

import argparse
import io
import json
import os
import time

import pyarrow.dataset as ds
import pyarrow.fs as pafs


class CountingFile(io.RawIOBase):
    def __init__(self, path, stats, latency_s, bandwidth):
        self.f = open(path, "rb")
        self.stats = stats
        self.latency_s = latency_s
        self.bandwidth = bandwidth

    def readable(self):
        return True

    def seekable(self):
        return True

    def seek(self, pos, whence=0):
        return self.f.seek(pos, whence)

    def tell(self):
        return self.f.tell()

    def read(self, n=-1):
        data = self.f.read(n)
        self.stats["requests"] += 1
        self.stats["bytes"] += len(data)
        if self.latency_s:
            time.sleep(self.latency_s + len(data) / self.bandwidth)
        return data

    def readinto(self, b):
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)

    def close(self):
        self.f.close()
        super().close()


class Handler(pafs.FileSystemHandler):
    def __init__(self, stats, latency_s, bandwidth):
        self.local = pafs.LocalFileSystem()
        self.stats = stats
        self.latency_s = latency_s
        self.bandwidth = bandwidth

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return self is not other

    def get_type_name(self):
        return "counting"

    def normalize_path(self, path):
        return path

    def get_file_info(self, paths):
        return self.local.get_file_info(paths)

    def get_file_info_selector(self, selector):
        return self.local.get_file_info(selector)

    def open_input_file(self, path):
        import pyarrow as pa

        return pa.PythonFile(CountingFile(path, self.stats, self.latency_s, self.bandwidth), mode="r")

    def open_input_stream(self, path):
        return self.open_input_file(path)

    def create_dir(self, *a):
        raise NotImplementedError

    def delete_dir(self, *a):
        raise NotImplementedError

    def delete_dir_contents(self, *a, **k):
        raise NotImplementedError

    def delete_root_dir_contents(self):
        raise NotImplementedError

    def delete_file(self, *a):
        raise NotImplementedError

    def move(self, *a):
        raise NotImplementedError

    def copy_file(self, *a):
        raise NotImplementedError

    def open_output_stream(self, *a):
        raise NotImplementedError

    def open_append_stream(self, *a):
        raise NotImplementedError


def read(path, columns, filesystem=None):
    dataset = ds.dataset(path, format="ipc", filesystem=filesystem)
    return dataset.to_table(columns=columns)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("file")
    p.add_argument("columns")
    p.add_argument("--latency-ms", type=float, default=0.0)
    p.add_argument("--bytes-per-second", type=float, default=100e6)
    a = p.parse_args()
    columns = a.columns.split(",")
    stats = {"requests": 0, "bytes": 0}
    fs = pafs.PyFileSystem(Handler(stats, a.latency_ms / 1e3, a.bytes_per_second))
    if a.latency_ms:
        t = time.perf_counter()
        table = read(a.file, columns, fs)
        seconds = time.perf_counter() - t
    else:
        t = time.perf_counter()
        table = read(a.file, columns)
        seconds = time.perf_counter() - t
        read(a.file, columns, fs)
    print(json.dumps({"seconds": seconds, "requests": stats["requests"], "bytes": stats["bytes"], "rows": table.num_rows}), flush=True)


if __name__ == "__main__":
    main()
    # pyarrow aborts at interpreter exit after reading through a Python
    # file system; the result is out, so leave without the teardown.
    os._exit(0)
