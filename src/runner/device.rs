//! The GPU the runner uses: adapter choice, device creation, and the
//! translation cache that [`crate::runner::run_kernel`] fills.

use super::RunError;
use crate::reflect::FunctionReflection;
use std::collections::HashMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex};

/// Optional features requested whenever the adapter has them: everything the
/// translator may emit WGSL for, plus the sampler and texture extensions that
/// Metal has natively.
const WANTED_FEATURES: &[wgpu::Features] = &[
    wgpu::Features::SHADER_F16,
    wgpu::Features::SHADER_I16,
    wgpu::Features::SHADER_INT64,
    wgpu::Features::SUBGROUP,
    wgpu::Features::SUBGROUP_BARRIER,
    wgpu::Features::SHADER_FLOAT32_ATOMIC,
    wgpu::Features::VERTEX_WRITABLE_STORAGE,
    wgpu::Features::CLIP_DISTANCES,
    wgpu::Features::TIMESTAMP_QUERY,
    wgpu::Features::DUAL_SOURCE_BLENDING,
    wgpu::Features::PRIMITIVE_INDEX,
    wgpu::Features::TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES,
    wgpu::Features::FLOAT32_FILTERABLE,
    wgpu::Features::ADDRESS_MODE_CLAMP_TO_BORDER,
    wgpu::Features::ADDRESS_MODE_CLAMP_TO_ZERO,
    wgpu::Features::TEXTURE_ATOMIC,
];

/// A translated kernel: the WGSL module and the kernel's reflection.
#[derive(Clone, Debug)]
pub struct Translation {
    /// The WGSL module.
    pub wgsl: String,
    /// The kernel's reflection.
    pub function: FunctionReflection,
    /// Warnings of the translation, rendered (empty if none).
    pub warnings: String,
    /// The warnings, for other formats (JSON, `-Werror`).
    pub warning_diagnostics: crate::diagnostics::Diagnostics,
    /// The files the warnings point into.
    pub source_map: crate::source_map::SourceMap,
}

/// What a translation depends on: source name and text, the options (by
/// their `Debug` form, which covers every field) and the entry.
type CacheKey = (String, String, String, String);

/// One adapter, its device and queue.
///
/// The device has the adapter's own limits (not wgpu's defaults, which are far
/// lower than what Metal kernels expect) and every optional feature the
/// translator may need that the adapter offers: `SHADER_F16`, `SHADER_I16`,
/// `SHADER_INT64`, `SUBGROUP`, `SUBGROUP_BARRIER`, `SHADER_FLOAT32_ATOMIC`,
/// `VERTEX_WRITABLE_STORAGE`, `CLIP_DISTANCES`, `TIMESTAMP_QUERY` (for
/// benchmarks), `DUAL_SOURCE_BLENDING`, `PRIMITIVE_INDEX`,
/// `TEXTURE_ADAPTER_SPECIFIC_FORMAT_FEATURES`,
/// `FLOAT32_FILTERABLE`, `ADDRESS_MODE_CLAMP_TO_BORDER`,
/// `ADDRESS_MODE_CLAMP_TO_ZERO`.
pub struct Gpu {
    info: wgpu::AdapterInfo,
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) limits: wgpu::Limits,
    cache: Mutex<HashMap<CacheKey, Arc<Translation>>>,
    /// Why the device was lost, once it has been (a driver reset, a
    /// kernel the OS killed): every later operation fails with it.
    lost: Arc<Mutex<Option<String>>>,
    /// How long to wait for submitted work before giving up.
    timeout: std::time::Duration,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gpu")
            .field("adapter", &self.adapter_line())
            .finish()
    }
}

impl Gpu {
    /// Picks an adapter and creates the device.
    ///
    /// `WGPU_BACKEND` (e.g. `vulkan`, `gl`) limits the backends searched;
    /// `WGPU_ADAPTER_NAME` picks the first adapter whose name contains it
    /// (case-insensitive); `WGPU_POWER_PREF` is honoured otherwise.
    pub fn new() -> Result<Gpu, RunError> {
        pollster::block_on(Self::new_async(None))
    }

    /// Like [`Gpu::new`], searching only `backends` (e.g.
    /// `wgpu::Backends::GL`) whatever `WGPU_BACKEND` says.
    pub fn with_backends(backends: wgpu::Backends) -> Result<Gpu, RunError> {
        pollster::block_on(Self::new_async(Some(backends)))
    }

    async fn new_async(backends: Option<wgpu::Backends>) -> Result<Gpu, RunError> {
        // Without WGPU_BACKEND, the primary backends (Vulkan, Metal, DX12)
        // come first: merely creating a GL instance prints EGL noise on
        // headless machines, and GL is the weakest for compute. GL remains
        // the fallback when nothing else exists.
        let from_env = std::env::var_os("WGPU_BACKEND").is_some();
        let adapter = match backends {
            Some(backends) => pick_adapter(&instance_for(backends)).await?,
            None if from_env => pick_adapter(&instance(wgpu::Backends::all())).await?,
            None => match pick_adapter(&instance(wgpu::Backends::PRIMARY)).await {
                Ok(adapter) => adapter,
                Err(_) => pick_adapter(&instance(wgpu::Backends::all())).await?,
            },
        };
        let info = adapter.get_info();
        let limits = adapter.limits();
        let available = adapter.features();
        let required_features = WANTED_FEATURES
            .iter()
            .filter(|f| available.contains(**f))
            .fold(wgpu::Features::empty(), |acc, f| acc | *f);
        let (device, queue) = adapter
            .request_device(&wgpu::DeviceDescriptor {
                label: Some("msl2wgsl runner"),
                required_features,
                required_limits: limits.clone(),
                ..Default::default()
            })
            .await
            .map_err(|e| RunError::RequestDevice(e.to_string()))?;
        // wgpu's default handler panics; every operation of the runner runs
        // inside error scopes, so anything reaching here is only logged.
        device.on_uncaptured_error(Arc::new(|e| log::error!("uncaptured wgpu error: {e}")));
        let lost = Arc::new(Mutex::new(None));
        let record = Arc::clone(&lost);
        device.set_device_lost_callback(move |reason, message| {
            // Dropping the device "loses" it too; that is no error.
            if reason != wgpu::DeviceLostReason::Destroyed {
                if let Ok(mut lost) = record.lock() {
                    *lost = Some(format!("{reason:?}: {message}"));
                }
            }
        });
        Ok(Gpu {
            info,
            device,
            queue,
            limits,
            cache: Mutex::new(HashMap::new()),
            lost,
            timeout: super::resources::default_gpu_timeout(),
        })
    }

    /// Waits at most `timeout` for the GPU to finish a dispatch or a
    /// draw (the default: `MSL2WGSL_GPU_TIMEOUT_S` seconds, else 120);
    /// past it the operation fails with [`RunError::Gpu`].
    pub fn with_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long the runner waits for the GPU.
    pub fn timeout(&self) -> std::time::Duration {
        self.timeout
    }

    /// An error if the device has been lost.
    pub(crate) fn check_lost(&self) -> Result<(), RunError> {
        let lost = self.lost.lock().map(|l| l.clone()).unwrap_or(None);
        match lost {
            Some(why) => Err(RunError::Gpu(format!("the GPU device was lost ({why})"))),
            None => Ok(()),
        }
    }

    /// One line naming the adapter: name, backend, device type and driver.
    pub fn adapter_line(&self) -> String {
        let i = &self.info;
        let mut line = format!("{} ({:?}, {:?}", i.name, i.backend, i.device_type);
        if !i.driver.is_empty() {
            line += &format!(", {}", i.driver);
            if !i.driver_info.is_empty() {
                line += &format!(" {}", i.driver_info);
            }
        }
        line.push(')');
        line
    }

    /// The adapter's description: its name, driver and
    /// [`wgpu::AdapterInfo::backend`], the backend that runs everything
    /// (what `WGPU_BACKEND` or [`Gpu::with_backends`] chose).
    pub fn info(&self) -> &wgpu::AdapterInfo {
        &self.info
    }

    /// The backend the device runs on (Vulkan, GL, Metal, DX12).
    pub fn backend(&self) -> wgpu::Backend {
        self.info.backend
    }

    /// The device's limits (the adapter's).
    pub fn limits(&self) -> &wgpu::Limits {
        &self.limits
    }

    /// The features the device was created with.
    pub fn features(&self) -> wgpu::Features {
        self.device.features()
    }

    /// The wgpu device.
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    /// The wgpu queue.
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// `wanted`, unless the device lacks `SHADER_F16`: then `half` is
    /// emulated in `f32` (a `half` buffer still holds 2-byte elements).
    pub fn half_mode(&self, wanted: crate::library::HalfMode) -> crate::library::HalfMode {
        match self.features().contains(wgpu::Features::SHADER_F16) {
            true => wanted,
            false => crate::library::HalfMode::F32,
        }
    }

    /// `wanted`, unless the device lacks `SHADER_INT64` (wgpu's GL
    /// backend): then 64-bit integers are computed in their low 32 bits, as
    /// on WebGPU (a `size_t` in a buffer still takes Metal's 8 bytes).
    pub fn wide_integers(
        &self,
        wanted: crate::library::WideIntegers,
    ) -> crate::library::WideIntegers {
        match self.features().contains(wgpu::Features::SHADER_INT64) {
            true => wanted,
            false => crate::library::WideIntegers::Low32,
        }
    }

    /// `options` with what this device lacks emulated: `half` in `f32`
    /// ([`Self::half_mode`]), 64-bit integers in 32 bits
    /// ([`Self::wide_integers`]); `None` when it needs no change.
    pub fn fitted_options(&self, options: &crate::Options) -> Option<crate::Options> {
        let half = self.half_mode(options.half);
        let wide_integers = self.wide_integers(options.wide_integers);
        (half != options.half || wide_integers != options.wide_integers).then(|| crate::Options {
            half,
            wide_integers,
            ..options.clone()
        })
    }

    /// How this device runs Metal's SIMD groups: `wanted`, or for `Auto`
    /// native subgroups where they are exactly 32 lanes (Apple's width, in
    /// Apple's lane order for linear threadgroups) and the 32-lane emulation
    /// elsewhere (other widths, varying widths, no subgroups), falling back
    /// to native subgroups for a kernel the emulation cannot take.
    pub fn simd_groups(&self, wanted: crate::SimdGroups) -> crate::SimdGroups {
        use crate::SimdGroups as S;
        let native_32 = self.features().contains(wgpu::Features::SUBGROUP)
            && self.info.subgroup_min_size == 32
            && self.info.subgroup_max_size == 32;
        match wanted {
            S::Auto if native_32 => S::Native,
            // The emulation, or native subgroups for a kernel it cannot take.
            mode => mode,
        }
    }

    /// The width of this device's subgroups where it is fixed (its least and
    /// greatest widths agree), for [`crate::Options::subgroup_width`].
    pub fn subgroup_width(&self) -> Option<u32> {
        (self.features().contains(wgpu::Features::SUBGROUP)
            && self.info.subgroup_min_size == self.info.subgroup_max_size)
            .then_some(self.info.subgroup_max_size)
    }

    /// How this device writes 8/16-bit elements: `wanted`, or for `Auto`
    /// whole words combined through quad operations where it has subgroups
    /// of at least 4 lanes (a quad), the atomic pairs elsewhere.
    pub fn byte_stores(&self, wanted: crate::ByteStores) -> crate::ByteStores {
        use crate::ByteStores as B;
        let quads =
            self.features().contains(wgpu::Features::SUBGROUP) && self.info.subgroup_min_size >= 4;
        match wanted {
            B::Auto if quads => B::Subgroups,
            B::Auto => B::Atomic,
            mode => mode,
        }
    }

    /// Checks that the device has every feature in `required` (spelled as in
    /// [`FunctionReflection::required_features`]: `"shader-f16"`, ...).
    pub fn check_features(&self, required: &[String]) -> Result<(), RunError> {
        let have = self.features();
        for name in required {
            let feature = parse_feature(name)?;
            if !have.contains(feature) {
                return Err(RunError::MissingFeature {
                    feature: name.clone(),
                    adapter: self.adapter_line(),
                });
            }
        }
        Ok(())
    }

    /// Translates `entry` of `source` with `options` (whose `entries`,
    /// `threadgroup_size` and `target` are replaced by `entry`, `size` and
    /// [`crate::Target::Wgpu`]), reusing an earlier identical translation.
    pub fn translate(
        &self,
        source_name: &str,
        source: &str,
        options: &crate::Options,
        entry: &str,
        size: Option<[u32; 3]>,
    ) -> Result<Arc<Translation>, RunError> {
        let mut options = options.clone();
        options.entries = vec![entry.to_string()];
        options.threadgroup_size = size;
        // wgpu compiles the WGSL: its dialect may use wgpu's extensions
        // (`subgroupBarrier`) and must not carry `enable subgroups;`, which
        // naga's WGSL parser rejects.
        options.target = crate::Target::Wgpu;
        options.half = self.half_mode(options.half);
        options.wide_integers = self.wide_integers(options.wide_integers);
        options.byte_stores = self.byte_stores(options.byte_stores);
        options.simd = self.simd_groups(options.simd);
        options.subgroup_width = self.subgroup_width();
        let key = (
            source_name.to_string(),
            source.to_string(),
            format!("{options:?}"),
            entry.to_string(),
        );
        if let Some(hit) = self.lock_cache().get(&key) {
            return Ok(hit.clone());
        }
        // Translate outside the lock: a slow translation must not block
        // other threads running cached kernels.
        let translation = Arc::new(super::translate_kernel(
            source_name,
            source,
            &options,
            entry,
        )?);
        self.lock_cache().insert(key, translation.clone());
        Ok(translation)
    }

    /// [`Gpu::translate`] with the function constant values `values` (by
    /// Metal index) that `entry` needs at translation (W0415), as Metal
    /// specialises a function when the host makes it: translated again with
    /// them until it no longer waits for any (each translation cached by
    /// its values).
    pub fn translate_specialized(
        &self,
        source_name: &str,
        source: &str,
        options: &crate::Options,
        entry: &str,
        size: Option<[u32; 3]>,
        values: &std::collections::BTreeMap<u32, f64>,
    ) -> Result<Arc<Translation>, RunError> {
        super::constants::specialize(options, values, |options| {
            self.translate(source_name, source, options, entry, size)
        })
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, HashMap<CacheKey, Arc<Translation>>> {
        // A panic elsewhere while holding the lock leaves the map intact.
        self.cache
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// An instance for `backends`, unless `WGPU_BACKEND` says otherwise; the
/// other `WGPU_*` instance variables (validation, debug flags) apply too.
fn instance(backends: wgpu::Backends) -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends;
    wgpu::Instance::new(desc.with_env())
}

/// An instance for exactly `backends` (the other `WGPU_*` instance
/// variables apply).
fn instance_for(backends: wgpu::Backends) -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle().with_env();
    desc.backends = backends;
    wgpu::Instance::new(desc)
}

/// Chooses the adapter: by `WGPU_ADAPTER_NAME` if set, else wgpu's choice.
async fn pick_adapter(instance: &wgpu::Instance) -> Result<wgpu::Adapter, RunError> {
    // wgpu::util::initialize_adapter_from_env panics when the name matches
    // nothing; the runner reports that as an error instead.
    if let Ok(wanted) = std::env::var("WGPU_ADAPTER_NAME") {
        let adapters = instance.enumerate_adapters(wgpu::Backends::all()).await;
        // enumerate_adapters only lists the instance's own backends.
        let needle = wanted.to_lowercase();
        let mut available = Vec::new();
        for adapter in adapters {
            let name = adapter.get_info().name;
            if name.to_lowercase().contains(&needle) {
                return Ok(adapter);
            }
            available.push(name);
        }
        return Err(RunError::AdapterNotFound { wanted, available });
    }
    instance
        .request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::from_env()
                .unwrap_or(wgpu::PowerPreference::HighPerformance),
            ..Default::default()
        })
        .await
        .map_err(|e| RunError::NoAdapter(e.to_string()))
}

/// Parses a feature name: WebGPU's kebab-case names, wgpu's `wgpu-` prefixed
/// ones (with or without the prefix), or the Rust constant's name.
fn parse_feature(name: &str) -> Result<wgpu::Features, RunError> {
    wgpu::Features::from_str(name)
        .or_else(|()| wgpu::Features::from_str(&format!("wgpu-{name}")))
        .ok()
        .or_else(|| wgpu::Features::from_name(&name.to_uppercase().replace('-', "_")))
        .ok_or_else(|| RunError::UnknownFeature(name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::parse_feature;

    #[test]
    fn feature_names() {
        let f16 = parse_feature("shader-f16").unwrap();
        assert_eq!(f16, wgpu::Features::SHADER_F16);
        assert_eq!(
            parse_feature("shader-int64").unwrap(),
            wgpu::Features::SHADER_INT64
        );
        assert_eq!(
            parse_feature("wgpu-shader-i16").unwrap(),
            wgpu::Features::SHADER_I16
        );
        assert_eq!(parse_feature("SUBGROUP").unwrap(), wgpu::Features::SUBGROUP);
        assert!(parse_feature("no-such-feature").is_err());
    }
}
