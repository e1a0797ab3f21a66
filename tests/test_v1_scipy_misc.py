"""scipy.misc's image functions (SciPy 1.1's behaviour) through Pillow, for run mode."""

import numpy as np
import pytest

from tf1compat.v1 import scipy_misc as misc

pytestmark = pytest.mark.tf  # tf1compat.v1 loads TensorFlow

Image = pytest.importorskip("PIL.Image")


def test_imsave_imread_round_trip_uint8(tmp_path, rng):
    rgb = rng.integers(0, 256, (5, 7, 3), dtype=np.uint8)
    gray = rng.integers(0, 256, (4, 6), dtype=np.uint8)
    misc.imsave(tmp_path / "rgb.png", rgb)
    misc.imsave(str(tmp_path / "gray.bmp"), gray, format="BMP")
    np.testing.assert_array_equal(misc.imread(tmp_path / "rgb.png"), rgb)
    np.testing.assert_array_equal(misc.imread(tmp_path / "gray.bmp"), gray)
    with Image.open(tmp_path / "rgb.png") as image:
        np.testing.assert_array_equal(np.asarray(image), rgb)


def test_floats_are_scaled_by_their_own_range_as_scipy_did(tmp_path):
    misc.imsave(tmp_path / "f.png", np.array([[0.25, 0.5], [0.75, 1.25]]))
    np.testing.assert_array_equal(misc.imread(tmp_path / "f.png"), [[0, 64], [128, 255]])
    assert misc.bytescale(np.array([2.0, 2.0])).tolist() == [0, 0]  # a flat image
    assert misc.bytescale(np.array([0.0, 1.0]), high=100).tolist() == [0, 100]
    with pytest.raises(ValueError, match=r"need 0 <= low <= high <= 255, got low=0, high=300"):
        misc.bytescale(np.array([0.0]), high=300)


def test_channel_first_arrays_and_modes(tmp_path, rng):
    planes = rng.integers(0, 256, (3, 4, 5), dtype=np.uint8)
    image = misc.toimage(planes)
    assert image.mode == "RGB" and image.size == (5, 4)
    np.testing.assert_array_equal(np.asarray(image), planes.transpose(1, 2, 0))
    assert misc.toimage(rng.integers(0, 256, (4, 5, 4), dtype=np.uint8)).mode == "RGBA"
    assert misc.toimage(np.zeros((2, 3)), mode="P").mode == "P"
    assert misc.toimage(np.eye(3, dtype=np.float32), mode="F").getpixel((1, 1)) == 1.0
    with pytest.raises(ValueError, match=r"shape \(2, 2, 2\) fits no image mode"):
        misc.toimage(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="mode 'CMYK' does not fit 3 channels"):
        misc.toimage(planes, mode="CMYK")
    with pytest.raises(ValueError, match="complex"):
        misc.toimage(np.zeros((2, 2), dtype=complex))


def test_imread_converts_palette_and_bilevel_images_and_flattens(tmp_path):
    palette = Image.new("P", (3, 2))
    palette.putpalette([0, 0, 0, 255, 0, 0] + [0] * 762)
    palette.putpixel((1, 0), 1)
    palette.save(tmp_path / "p.png")
    Image.new("1", (2, 2), 1).save(tmp_path / "bw.png")
    rgb = misc.imread(tmp_path / "p.png")
    assert rgb.shape == (2, 3, 3) and rgb[0, 1].tolist() == [255, 0, 0]
    assert misc.imread(tmp_path / "bw.png").tolist() == [[255, 255], [255, 255]]
    flat = misc.imread(tmp_path / "p.png", flatten=True)
    assert flat.dtype == np.float32 and flat.shape == (2, 3)
    assert misc.imread(tmp_path / "p.png", mode="L").shape == (2, 3)
    with pytest.raises(TypeError, match="expected a PIL image, got ndarray"):
        misc.fromimage(np.zeros((2, 2)))


def test_imresize_sizes_as_percent_fraction_or_rows_cols(rng):
    image = rng.integers(0, 256, (8, 6, 3), dtype=np.uint8)
    assert misc.imresize(image, 50).shape == (4, 3, 3)
    assert misc.imresize(image, 0.25).shape == (2, 1, 3)
    assert misc.imresize(image, (5, 7), interp="nearest").shape == (5, 7, 3)
    resized = misc.imresize(np.full((4, 4), 0.5), (2, 2))  # one value: bytescale gives 0
    assert resized.dtype == np.uint8 and resized.tolist() == [[0, 0], [0, 0]]
    with pytest.raises(ValueError, match=r"interp='area'; expected one of \['bicubic'"):
        misc.imresize(image, 50, interp="area")


def test_scipy_view_gives_misc_whether_or_not_scipy_is_installed():
    top, view = misc.scipy_view()
    assert top.misc is view and view.imread is misc.imread and view.imresize is misc.imresize
    try:
        import scipy
    except ImportError:
        assert top.__doc__.startswith("SciPy is not installed")
        with pytest.raises(AttributeError, match="'scipy' has no attribute 'ndimage'"):
            top.ndimage  # noqa: B018
    else:
        assert top.__version__ == scipy.__version__ and not hasattr(scipy, "imread")
